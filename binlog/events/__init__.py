"""Event classes and their decoders; importing this package fills EVENT_DECODERS."""
from . import control, gtid, payload, query, rows, table_map  # noqa: F401  (registration)
from .base import Event, OpaqueEvent, UnknownEvent
from .control import (
                      FormatDescriptionEvent,
                      HeartbeatEvent,
                      IncidentEvent,
                      IntvarEvent,
                      RandEvent,
                      RotateEvent,
                      StartEncryptionEvent,
                      StopEvent,
                      UserVarEvent,
                      XidEvent,
)
from .gtid import (
                      BinlogCheckpointEvent,
                      GtidListEvent,
                      MariaGtidEvent,
                      MysqlGtidEvent,
                      PreviousGtidsEvent,
                      XaPrepareEvent,
)
from .payload import TransactionPayloadEvent
from .query import QueryEvent, RowsQueryEvent
from .rows import RowsEvent
from .table_map import TableMapEvent

__all__ = [
    "Event", "OpaqueEvent", "UnknownEvent", "FormatDescriptionEvent", "HeartbeatEvent",
    "IncidentEvent", "IntvarEvent", "RandEvent", "RotateEvent", "StartEncryptionEvent", "StopEvent",
    "UserVarEvent",
    "XidEvent", "BinlogCheckpointEvent", "GtidListEvent", "MariaGtidEvent", "MysqlGtidEvent",
    "PreviousGtidsEvent", "XaPrepareEvent", "TransactionPayloadEvent", "QueryEvent",
    "RowsQueryEvent", "RowsEvent", "TableMapEvent",
]
