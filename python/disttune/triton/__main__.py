"""Runs a Python program with the drop-in switch on: python -m disttune.triton PROGRAM.py [ARGS...]."""

import runpy
import sys

import disttune.triton


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python -m disttune.triton PROGRAM.py [ARGS...]\n"
              "Runs PROGRAM with every triton.autotune made the disttune drop-in (docs/triton-dropin.md).")
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    disttune.triton.install()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
