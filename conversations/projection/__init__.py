"""The projection: what of a stored block a human surface may show (DESIGN section 4)."""
