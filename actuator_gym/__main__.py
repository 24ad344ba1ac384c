"""``python -m actuator_gym`` == the ``actuator-gym`` console script."""

import sys


def main(argv=None) -> int:
    from .tools.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
