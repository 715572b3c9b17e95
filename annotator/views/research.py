"""Pages researchers manage studies with: list, create, dashboard, exports, report."""

from django.http import HttpRequest, HttpResponse


def _todo(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    raise NotImplementedError


study_list = study_create = dashboard = export = report = _todo
