import sys

# `codeact link` (global scope) has its own parser in links.py; everything else goes through the CLI.
if sys.argv[1:2] == ["link"]:
    from .links import main as link_main

    sys.exit(link_main(sys.argv[2:]))

from .cli import main  # noqa: E402

sys.exit(main())
