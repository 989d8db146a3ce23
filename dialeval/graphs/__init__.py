"""One LangGraph StateGraph per benchmark protocol, over one item."""
