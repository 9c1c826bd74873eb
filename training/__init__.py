"""Self-play training for damii-env (PPO and AlphaZero-style trainers: the training issue)."""
