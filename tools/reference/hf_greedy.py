"""Greedy decoding with a Hugging Face causal LM and the top-k summary the golden files record.

Shared by tinystories_greedy.py and tiny_models.py.
"""
import torch

TOP = 5


def greedy(model, prompt_ids, new_tokens):
    """Prefills the prompt, then runs one token at a time with the KV cache, as a server would.

    Returns the chosen ids and, for each, the float32 logits [vocab] it was chosen from.
    """
    ids, steps = [], []
    past = None
    inputs = torch.tensor([prompt_ids])
    with torch.no_grad():
        for _ in range(new_tokens):
            out = model(input_ids=inputs, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1].float()
            steps.append(logits)
            ids.append(int(torch.argmax(logits)))
            inputs = torch.tensor([[ids[-1]]])
    return ids, steps


def top_entries(logits, position):
    """The top-5 ids with their logits and log-probabilities, rounded to 6 decimals.

    position is the index of the token whose logits these are (prompt length - 1 + step).
    """
    values, ids = torch.topk(logits, TOP)
    logprobs = torch.log_softmax(logits, dim=-1)[ids]
    return {
        "position": position,
        "top5_ids": [int(i) for i in ids],
        "top5_logits": [round(float(v), 6) for v in values],
        "top5_logprobs": [round(float(v), 6) for v in logprobs],
    }
