// EngramMCP: the Model Context Protocol server over stdio.
