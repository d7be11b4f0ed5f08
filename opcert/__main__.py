from opcert.cli import entry

entry()
