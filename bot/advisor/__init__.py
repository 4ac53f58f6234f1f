"""The pure advisor: plan schema, memory estimator, throughput, recommendation, advice and the knowledge files.

Imports nothing else of `bot` and never rasa (tests/test_layers.py checks both)."""
