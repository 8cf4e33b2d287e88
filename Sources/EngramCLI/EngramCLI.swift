// EngramCLI: the commands of the `engram` tool (parse, call the engine, render).
