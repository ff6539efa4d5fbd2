"""placeholder"""
REDTEAM = ()
