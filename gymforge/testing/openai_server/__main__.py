from gymforge.testing.openai_server import main

main()
