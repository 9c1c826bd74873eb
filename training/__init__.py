"""Self-play training for damii-env (PPO and AlphaZero-style trainers come with the training issue)."""
