"""Built-in players for damii-env (random now; greedy, alpha-beta and neural players follow)."""
