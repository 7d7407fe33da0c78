"""The service's Python client, where docs/serve.md imports it from; it lives in ``salesgym.service_api.client``
(with the wire models), which the benchmark uses without importing the service."""

from salesgym.service_api.client import Client, RemoteEnv, ServiceError

__all__ = ["Client", "RemoteEnv", "ServiceError"]
