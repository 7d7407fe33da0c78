"""The workflows family: short, checkable sales tasks over sandboxed replicas of four sales apps."""
