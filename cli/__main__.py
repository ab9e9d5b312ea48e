import sys

from stackgraph.cli.main import main

sys.exit(main())
