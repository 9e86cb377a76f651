"""`python -m disttune`: the disttune command (see disttune.cli)."""

from disttune.cli import main

raise SystemExit(main())
