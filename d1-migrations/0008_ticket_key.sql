-- A websocket ticket remembers the (hashed) API key that asked for it, so turns sent over the
-- socket it opens count against that key's rate limits like turns sent over HTTP.
ALTER TABLE ws_tickets ADD COLUMN key_hash TEXT;
