"""Re-projection: a conversation's Block rows rebuilt from its verbatim store under the policies
in force, so a policy change applies to old data too (DESIGN section 4).

Each message's prompt hash (``Message.prompt_sha256``: what the model sees of it, which a
resent history is matched by, ``replay.py``) is computed again on the way, from the raw text and
the format's profile in force: a member a newer profile says the model never sees (``Unseen``)
is then recognised in messages stored before it was listed.

``field_policy_save`` and ``field_policy_delete`` (``services.py``) create a ``ReprojectionJob``
and enqueue ``tasks.reproject``, which runs ``reprojection_run`` here: every conversation, in id
order, one transaction each, resumable after a crash. Blocks are projected by the one projection
(``project.project_blocks``), in sequence order, exactly as ingest projected them.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..models import Block, Conversation, Message, ReprojectionJob
from ..replay import prompt_sha256
from .policies import field_policies
from .project import Policies, ToolNames, project_blocks
from .stored import stored_messages


@transaction.atomic(durable=True)
def conversation_reproject(*, conversation_id: int, policies: Policies) -> int:
    """Rebuild one conversation's Block rows from its verbatim store under ``policies``.

    The messages are decrypted and parsed again by their format; the blocks are projected the
    way ingest projects them. Returns the number of blocks written. A conversation erased
    meanwhile is skipped (0).
    """
    conversation = Conversation.objects.select_for_update().filter(pk=conversation_id).first()
    if conversation is None:
        return 0
    messages = list(
        Message.objects.filter(conversation=conversation)
        .order_by("sequence")
        .values_list("sequence", "raw_ciphertext", "exchange__format", "pk", "prompt_sha256")
    )
    if not messages:
        return 0
    names = ToolNames()
    rows: list[Block] = []
    rehashed: list[Message] = []
    for (_, _, fmt, pk, prompt), raw, blocks in stored_messages(conversation.pk, messages):
        for position, row in enumerate(project_blocks(blocks, policies, names)):
            rows.append(
                Block(message_id=pk, conversation_id=conversation.pk, position=position, **row)
            )
        now = prompt_sha256(raw, fmt)
        if now != prompt:
            rehashed.append(Message(pk=pk, prompt_sha256=now))
    Block.objects.filter(conversation=conversation).delete()
    Block.objects.bulk_create(rows)
    Message.objects.bulk_update(rehashed, ["prompt_sha256"])
    return len(rows)


def reprojection_run(*, job_id: int, chunk: int = 200) -> ReprojectionJob:
    """Run (or resume) a re-projection job: every conversation, in id order, one transaction
    each, the job's progress saved after each chunk. Idempotent: a job finished is left alone,
    and a crashed one resumes after the last conversation it recorded."""
    job = ReprojectionJob.objects.get(pk=job_id)
    if job.status == ReprojectionJob.Status.COMPLETED:
        return job
    policies = field_policies(fresh=True)
    job.status = ReprojectionJob.Status.RUNNING
    job.total = Conversation.objects.count()
    job.save(update_fields=["status", "total"])
    try:
        while True:
            ids = list(
                Conversation.objects.filter(pk__gt=job.last_conversation_id)
                .order_by("pk")
                .values_list("pk", flat=True)[:chunk]
            )
            if not ids:
                break
            for conversation_id in ids:
                conversation_reproject(conversation_id=conversation_id, policies=policies)
            job.done += len(ids)
            job.last_conversation_id = ids[-1]
            job.save(update_fields=["done", "last_conversation_id"])
    except Exception as exc:
        job.status = ReprojectionJob.Status.FAILED
        job.error = f"{type(exc).__name__}: {exc}"[:2000]
        job.save(update_fields=["status", "error"])
        raise
    job.status = ReprojectionJob.Status.COMPLETED
    job.done = max(job.done, job.total)
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "done", "finished_at"])
    return job
