"""``binlog serve``: a replication endpoint that serves a directory of binlogs (a relay,
or the output of ``binlog rewrite``) over the MySQL replication protocol to replicas and
CDC clients that are not changed in any way.  ``events``: the artificial events a
primary adds to a dump; ``queries``: the answers to what clients ask before the dump;
``session``: one client; ``server``: the listener."""
