from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from . import (
    access_views,
    compliance_views,
    hardening,
    live_views,
    review_access_views,
    review_views,
    sharing_views,
    signals_views,
    views,
)

urlpatterns = [
    path("", views.home, name="home"),
    path("conversations/<int:pk>/", views.conversation_detail, name="conversation-detail"),
    path("conversations/<int:pk>/calls/<str:call>/", views.tool_call, name="conversation-call"),
    path(
        "conversations/<int:pk>/turns/<str:turn>/parts/",
        views.turn_parts,
        name="conversation-turn-parts",
    ),
    path("conversations/<int:pk>/live", live_views.conversation_live, name="conversation-live"),
    path("live/", live_views.live_now, name="live-now"),
    path("live/markdown", views.live_markdown, name="live-markdown"),
    path("conversations/<int:pk>/review/", review_views.review, name="conversation-review"),
    path("conversations/<int:pk>/review/ask/", review_access_views.review_ask, name="review-ask"),
    path("review-requests/", review_access_views.review_requests, name="review-requests"),
    path(
        "review-requests/<int:request_id>/decide/",
        review_access_views.review_request_decide,
        name="review-request-decide",
    ),
    # What leaves the console (conversations/sharing/).
    path(
        "conversations/<int:pk>/export.<str:fmt>",
        sharing_views.conversation_export,
        name="conversation-export",
    ),
    path("conversations/<int:pk>/share/", sharing_views.share_create, name="share-create"),
    path("conversations/<int:pk>/share/<int:link>/", sharing_views.share_made, name="share-made"),
    path("share-links/<int:link>/revoke/", sharing_views.share_revoke, name="share-revoke"),
    path("s/<str:token>/", sharing_views.share_page, name="share-page"),
    path("compliance/share-links/", sharing_views.share_links, name="share-links"),
    path("settings/", views.preferences, name="preferences"),
    path("signals/", signals_views.signals_index, name="signals"),
    path("signals/models/<path:snapshot>/", signals_views.model_page, name="signals-model"),
    path("signals/alerts/<int:pk>/", signals_views.alert_page, name="signals-alert"),
    path("signals/readiness/", signals_views.readiness, name="signals-readiness"),
    path("audit/", views.audit_log, name="audit-log"),
    path("audit/export.<str:fmt>", views.audit_export, name="audit-export"),
    path("audit/review-grants/", review_views.review_grants, name="review-grants"),
    path("compliance/deletions/", compliance_views.deletions, name="deletions"),
    path("compliance/deletions/new/", compliance_views.deletion_new, name="deletion-new"),
    path(
        "compliance/deletions/<int:pk>/", compliance_views.deletion_detail, name="deletion-detail"
    ),
    path(
        "compliance/deletions/<int:pk>/receipt.<str:fmt>",
        compliance_views.receipt_export,
        name="receipt-export",
    ),
    path("compliance/holds/", compliance_views.holds, name="legal-holds"),
    path("compliance/holds/<int:pk>/release/", compliance_views.hold_release, name="hold-release"),
    # Subject access and the exposure map (retention/access/).
    path("compliance/subject-access/", access_views.subject_access, name="subject-access"),
    path(
        "conversations/<int:pk>/exposure/",
        access_views.conversation_exposure,
        name="conversation-exposure",
    ),
    # Sign-in (passwords, single sign-on), the People pages and SCIM: console/people/.
    path("", include("console.people.urls")),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/v1/", include("conversations.api.urls")),
    path("api/v1/", include("retention.api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file: no inline script (CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    # Anything else under /api/ (an unknown path, a trailing slash, a malformed id): a JSON 404
    # in the API's error shape, never the HTML page.
    re_path(r"^api/", hardening.api_not_found, name="api-not-found"),
]
