"""The MySQL/MariaDB client/server protocol on its own, sans-IO: packet framing
(``packets``), the messages of each side (``messages``) and the authentication methods
with their password rules (``auth``).  ``sources.wire`` runs it over a socket."""
