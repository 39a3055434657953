"""SCIM 2.0 provisioning at ``/scim/v2/`` on django-scim2, for a service token of scope ``scim``.

django-scim2 serves the protocol: routes, list paging, filters (``filters.py``), the PATCH
operation loop, the discovery endpoints and the error shape. This package is the console's side:

- who may call (``auth.ScimTokenCheck``: ``Authorization: Bearer <token of scope scim>``);
- what a User and a Group are here (``adapters.UserAdapter``, ``adapters.GroupAdapter``) and the
  schemas published for them (``schemas.schemas()``): exactly the attributes the console keeps
  and gives back as sent;
- every write goes through one service of ``console/people/services`` (one audit row per
  request, whatever the number of PATCH operations in it): a PATCH is applied to the resource's
  representation first, then saved whole like a PUT.

Only accounts the identity provider manages are visible (``Person.in_directory``): a local
account (the break-glass admin) is out of SCIM's reach, and a user name it holds is a conflict.
Attributes the console does not keep (titles, addresses, the enterprise extension) are ignored,
as the identity providers expect.

The modules: ``auth.py`` (who may call), ``schemas.py`` (what is published, what SCIM may see),
``representation.py`` (a resource's attributes checked, PATCH applied, projections),
``adapters.py`` (Users and Groups through the services), ``filters.py`` (filters to SQL),
``views.py`` and ``urls.py`` (django-scim2's routes, with its discovery views answering as the RFC
shapes them). This ``__init__`` imports nothing: django-scim2 reads ``filters`` and ``auth`` while
it defines its own views and adapters, which the other modules build on.
"""
