"""The MySQL/MariaDB client/server protocol on its own, sans-IO, for both sides:

- ``packets``: packet framing (both sides);
- ``constants``: the numbers both sides use (capabilities, commands, dump flags, the
  MariaDB replica capabilities, error codes);
- ``client_side``: what a client or replica parses and builds (``sources.wire`` and
  ``sources.server`` run it over a socket; ``binlog serve`` too, towards its upstream);
- ``auth``: the client's authentication methods and their password rules;
- ``server_side``: what a server parses and builds (``binlog serve``).
"""
