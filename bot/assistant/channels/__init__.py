"""Rasa input channels of our own: a hardened Telegram channel and a socket.io channel that works with any
python-socketio 5.x. These modules import rasa; the core library in bot/ must not import them."""
