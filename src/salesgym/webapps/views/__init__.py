"""Each app's pages: ``ROUTES`` maps an app to its routes, navigation and home page (``server.AppRoutes``).

One module per app (the CRM's activities and board in ``crm_activity.py``); ``common.py`` holds what they share.
"""

from __future__ import annotations

from salesgym.webapps.request import AppRoutes
from salesgym.webapps.views import crm_activity, prospecting, scheduler, sequencer, task

ROUTES: dict[str, AppRoutes] = {
    "crm": AppRoutes("crm", crm_activity.routes(), crm_activity.NAV, "/contacts"),
    "sequencer": AppRoutes("sequencer", sequencer.ROUTES, sequencer.NAV, "/prospects"),
    "scheduler": AppRoutes("scheduler", scheduler.ROUTES, scheduler.NAV, "/events"),
    "prospecting": AppRoutes("prospecting", prospecting.ROUTES, prospecting.NAV, "/leads"),
    "task": AppRoutes("task", task.ROUTES, task.NAV, "/"),
}
