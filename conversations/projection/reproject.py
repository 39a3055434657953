"""Re-projection: a conversation's Block rows rebuilt from its verbatim store under the policies
in force, so a policy change applies to old data too (DESIGN section 4).

``field_policy_save`` and ``field_policy_delete`` (``services.py``) create a ``ReprojectionJob``
and enqueue ``tasks.reproject``, which runs ``reprojection_run`` here: every conversation, in id
order, one transaction each, resumable after a crash. Blocks are projected by the one projection
(``project.project_blocks``), in sequence order, exactly as ingest projected them.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ..models import Block, Conversation, Message, ReprojectionJob
from .policies import field_policies
from .project import Policies, ToolNames, project_blocks
from .stored import stored_blocks


@transaction.atomic
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
        .values_list("sequence", "raw_ciphertext", "exchange__format", "pk")
    )
    if not messages:
        return 0
    names = ToolNames()
    rows: list[Block] = []
    for (_, _, _, pk), blocks in stored_blocks(conversation.pk, messages):
        for position, row in enumerate(project_blocks(blocks, policies, names)):
            rows.append(
                Block(message_id=pk, conversation_id=conversation.pk, position=position, **row)
            )
    Block.objects.filter(conversation=conversation).delete()
    Block.objects.bulk_create(rows)
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
