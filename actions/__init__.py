"""rasa_sdk actions of the advisor: thin adapters between the Rasa tracker and the pure core in bot/."""
