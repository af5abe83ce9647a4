from randori.cli import main

main()
