import EngramCLI

await EngramCommandLine.main()
