"""Staff tools: the token-protected ticket web page and the actions behind it (reply, take, close)."""
