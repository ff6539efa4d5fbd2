from gymforge.cli import main

main()
