import sys

from .cli import main
from .sigint import honour_ctrl_c

honour_ctrl_c()
sys.exit(main())
