"""The support agent: `lookup` saves the order's status in state (its output_key), then `answer` replies."""

from google.adk.agents import LlmAgent, SequentialAgent

from .prompt import SUPPORT_PROMPT

lookup = LlmAgent(
    name="lookup",
    model="gemini-2.5-flash",
    instruction="Look up the customer's last order and reply with its status only.",
    output_key="order_status",
)
answer = LlmAgent(name="answer", model="gemini-2.5-flash", instruction=SUPPORT_PROMPT)
root_agent = SequentialAgent(name="support", sub_agents=[lookup, answer])
