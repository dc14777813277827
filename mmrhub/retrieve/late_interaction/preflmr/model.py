"""PreFLMR built from transformers' own parts, layer for layer as the authors' FLMRModelForRetrieval
(LinWeizheDragon/FLMR ``flmr/models/flmr/modeling_flmr.py``, "MF" below):

  - text encoders: a BertModel each for queries and passages (one shared when
    ``separate_query_and_context_text_encoder`` is false, MF:631-637), each followed by a bias-free linear to
    ``dim`` (MF:559-560);
  - vision tower: a CLIPVisionModel (MF:596, 1483), its CLS state *before* the post-layernorm
    (``last_hidden_state[:, 0]``, MF:1123) through an MLP ``hidden -> dim*P/2 -> Tanh -> dim*P`` (MF:527-542,
    587-593) read as P = ``mapping_network_prefix_length`` tokens of ``dim`` (MF:1130-1131);
  - transformer mapping network (PreFLMR): the penultimate layer's patch states (``hidden_states[-2][:, 1:]``,
    MF:1135) through a linear to the BERT width (MF:619-621), a BertEncoder of the configured depth with
    cross-attention (MF:607-624) attending to the query text encoder's first ``transformer_mapping_cross_attention_
    length`` output states (before the text linear, MF:1141-1157), then a linear to ``dim`` (MF:627-629, 1160);
  - query tokens: [text tokens (masked ones zeroed, MF:1107-1109), the P MLP tokens, the mapping network's tokens]
    (MF:1164-1167), each L2-normalised (MF:1232); passage tokens: the context text encoder's, masked ones zeroed,
    L2-normalised (MF:1296-1301, 1336).

Vectors leave in float32 (normalised after the upcast); masks say which tokens count. Masked vectors are zero, as
the authors' are, so a MaxSim over every token or over the kept ones gives the same score.
"""

import torch
import torch.nn.functional as F
from torch import nn

from mmrhub.retrieve.late_interaction.preflmr.config import PreFLMRConfig


class PreFLMRModel(nn.Module):
    """The query and passage encoders of one PreFLMR checkpoint (weights loaded by ``checkpoint.load_weights``)."""

    def __init__(self, config: PreFLMRConfig):
        from transformers import BertConfig
        from transformers import BertModel
        from transformers import CLIPVisionConfig
        from transformers import CLIPVisionModel

        super().__init__()
        self.config = config
        text = BertConfig(**config.text)
        self.context_text = BertModel(text, add_pooling_layer=True)  # the pooler is stored (MF:1405), never used
        self.context_text_linear = nn.Linear(text.hidden_size, config.dim, bias=False)
        if config.separate_text_encoders:
            self.query_text = BertModel(text, add_pooling_layer=True)
            self.query_text_linear = nn.Linear(text.hidden_size, config.dim, bias=False)
        vision = CLIPVisionConfig(**config.vision)
        self.vision = CLIPVisionModel(vision)
        width = config.dim * config.prefix_length
        self.vision_projection = nn.Sequential(
            nn.Linear(vision.hidden_size, width // 2), nn.Tanh(), nn.Linear(width // 2, width)
        )
        self.mapping_network = None
        if config.mapping is not None:
            from transformers.models.bert.modeling_bert import BertEncoder

            mapping = BertConfig(**config.mapping, is_decoder=True, add_cross_attention=True)
            mapping._attn_implementation = text._attn_implementation or "sdpa"  # a standalone encoder has none
            self.mapping_input_linear = nn.Linear(vision.hidden_size, mapping.hidden_size)
            self.mapping_network = BertEncoder(mapping)
            # The authors call BertEncoder without a self-attention mask: on their transformers (4.49, eager
            # attention for a config they build themselves) the mapping tokens attend to each other in full.
            # transformers 5 marks a decoder's self-attention causal instead; undo that.
            for layer in self.mapping_network.layer:
                layer.attention.self.is_causal = False
            self.mapping_output_linear = nn.Linear(mapping.hidden_size, config.dim)

    def query_encoder(self) -> tuple:
        """(BertModel, linear) of the queries: their own, or the passages' when shared."""
        if self.config.separate_text_encoders:
            return self.query_text, self.query_text_linear
        return self.context_text, self.context_text_linear

    def query(self, input_ids, attention_mask, token_mask, pixel_values) -> tuple:
        """Queries -> ((B, T, dim) float32 unit vectors, (B, T) bool kept-mask); T = query_maxlen text tokens, then
        the image's P + patch-count tokens (where the config concatenates them)."""
        bert, linear = self.query_encoder()
        states = bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        text = linear(states) * token_mask.unsqueeze(-1).to(states.dtype)
        parts, masks = [], []
        if self.config.query_text:
            parts.append(text)
            masks.append(token_mask)
        if self.config.query_vision:
            image = self.image_tokens(pixel_values, states, input_ids)
            parts.append(image)
            masks.append(torch.ones(image.shape[:2], dtype=torch.bool, device=image.device))
        return F.normalize(torch.cat(parts, dim=1).float(), p=2, dim=2), torch.cat(masks, dim=1)

    def image_tokens(self, pixel_values, text_states, input_ids):
        """The image's tokens: the MLP's P from the CLS state, then the mapping network's, one per patch."""
        out = self.vision(pixel_values=pixel_values, output_hidden_states=self.mapping_network is not None)
        cls = out.last_hidden_state[:, 0]
        tokens = self.vision_projection(cls).view(len(cls), -1, self.config.dim)
        if self.mapping_network is None:
            return tokens
        patches = self.mapping_input_linear(out.hidden_states[-2][:, 1:])
        length = self.config.cross_attention_length
        mapped = self.mapping_network(
            patches,
            encoder_hidden_states=text_states[:, :length],
            encoder_attention_mask=self.cross_attention_mask(input_ids[:, :length], text_states.dtype),
        ).last_hidden_state
        return torch.cat([tokens, self.mapping_output_linear(mapped)], dim=1)

    def cross_attention_mask(self, input_ids, dtype):
        """The text states the mapping network may attend to: all of them (MF:1142), less the ids of
        ``query_mask_input_ids_skip_list`` (MF:1143-1144), as an additive mask (MF:1151); None when all count."""
        if not self.config.query_skip_ids:
            return None
        skipped = torch.isin(input_ids, torch.tensor(self.config.query_skip_ids, device=input_ids.device))
        return (skipped[:, None, None, :].to(dtype)) * torch.finfo(dtype).min

    def passages(self, input_ids, attention_mask, token_mask) -> tuple:
        """Passages (text only) -> ((B, T, dim) float32 unit vectors, (B, T) bool kept-mask)."""
        states = self.context_text(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        vectors = self.context_text_linear(states) * token_mask.unsqueeze(-1).to(states.dtype)
        return F.normalize(vectors.float(), p=2, dim=2), token_mask
