"""The support agent's instruction, in Google ADK's {key} syntax."""

SUPPORT_PROMPT = """You answer the customer's questions about their last order.
Its status is {order_staus}.
Reply as JSON: {"status": {order_status}}
"""
