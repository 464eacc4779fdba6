#!/usr/bin/env python3
"""Builds src/prices/prices.json, the price table Mission Control ships, from LiteLLM's
model_prices_and_context_window.json (the file the `litellm` package ships as
litellm/model_prices_and_context_window_backup.json) and scripts/prices-extra.json (older
Anthropic and GLM names LiteLLM has dropped, which usage tools still price).

    pip download litellm==1.110.2 --no-deps -d /tmp/litellm && unzip -o /tmp/litellm/*.whl \
        'litellm/model_prices_and_context_window_backup.json' -d /tmp/litellm
    scripts/prices.py /tmp/litellm/litellm/model_prices_and_context_window_backup.json 1.110.2 2026-11-20

Rates are written in USD per million tokens. Missing cache rates are filled as the usage tools
fill them: an Anthropic model's cache write costs 1.25x its input and a cache read 0.1x; any
other model's cached input costs its input rate.
"""
import json, re, sys
from pathlib import Path

SRC, VERSION, DATE = sys.argv[1], sys.argv[2], sys.argv[3]
ROOT = Path(__file__).resolve().parent.parent
raw = json.load(open(SRC))
extra = json.load(open(ROOT / 'scripts/prices-extra.json'))

FAMILY = re.compile(r'^(claude-|gpt-|o1|o3|o4|codex-|gemini-|glm-)')
SKIP_MODES = {'embedding', 'image_generation', 'audio_transcription', 'audio_speech', 'moderation',
              'rerank', 'video_generation', 'image_edit', 'ocr', 'search', 'vector_store'}
REGION = re.compile(r'^(us|eu|apac|global|jp|au|ca|us-gov)\.')
FALLBACK_PROVIDERS = ['anthropic', 'openai', 'gemini', 'zai', 'bedrock_converse', 'bedrock',
                      'vertex_ai-anthropic_models', 'vertex_ai-language-models', 'vertex_ai',
                      'vertex_ai-zai_models', 'azure']


def usable(v):
    return isinstance(v, dict) and isinstance(v.get('input_cost_per_token'), (int, float)) \
        and isinstance(v.get('output_cost_per_token'), (int, float)) and v.get('mode') not in SKIP_MODES


def is_bare(key):
    return '/' not in key and not key.startswith('anthropic.') and not REGION.match(key)


def bare_name(key):
    """The model id an agent logs for a provider-prefixed LiteLLM key."""
    name = REGION.sub('', key.rsplit('/', 1)[-1])
    name = name.removeprefix('anthropic.')
    name = re.sub(r'-v\d+(:\d+)?$', '', name)
    return re.sub(r'@(default|latest)$', '', name).replace('@', '-')


def per_million(x):
    return round(x * 1_000_000, 6) if isinstance(x, (int, float)) else None


def rates(v, suffix=''):
    anthropic = 'anthropic' in (v.get('litellm_provider') or '') or v.get('_anthropic')
    r = {
        'input': per_million(v.get('input_cost_per_token' + suffix)),
        'output': per_million(v.get('output_cost_per_token' + suffix)),
        'cacheWrite': per_million(v.get('cache_creation_input_token_cost' + suffix)),
        'cacheRead': per_million(v.get('cache_read_input_token_cost' + suffix)),
    }
    if r['input'] is None or r['output'] is None:
        return None
    if r['cacheWrite'] is None:
        r['cacheWrite'] = round(r['input'] * (1.25 if anthropic else 1), 6)
    if r['cacheRead'] is None:
        r['cacheRead'] = round(r['input'] * (0.1 if anthropic else 1), 6)
    return r


def entry(v):
    out = rates(v)
    for tier in ('200k', '272k'):
        over = rates(v, f'_above_{tier}_tokens')
        if over:
            out[f'over{tier}'] = over
    return out


models = {}
for k, v in raw.items():
    if is_bare(k) and FAMILY.match(k) and usable(v):
        base = re.sub(r'-v\d+(:\d+)?$', '', k)
        if base != k and base in raw:
            continue
        models[k] = entry(v)
for k, v in extra['models'].items():
    if k not in raw and k not in models:
        models[k] = v
fallback = {}
for k, v in raw.items():
    if is_bare(k) or not usable(v) or (v.get('litellm_provider') or '') not in FALLBACK_PROVIDERS:
        continue
    b = bare_name(k)
    if FAMILY.match(b) and b not in models:
        fallback.setdefault(b, []).append(k)


def preference(key):
    p = raw[key].get('litellm_provider') or ''
    rank = FALLBACK_PROVIDERS.index(p)
    region = 1 if REGION.match(key) or key.count('/') > 1 else 0
    return (region, rank, len(key), key)


for b, keys in sorted(fallback.items()):
    best = min(keys, key=preference)
    models[best] = entry(raw[best])

out = {
    'source': f'LiteLLM model_prices_and_context_window.json (litellm {VERSION}), '
              f'with older names from {extra["source"]}',
    'date': DATE,
    'unit': 'USD per million tokens',
    'models': dict(sorted(models.items())),
}
dest = ROOT / 'src/prices/prices.json'
dest.write_text(json.dumps(out, indent=0, separators=(',', ':')) + '\n')
print(f'{len(models)} models -> {dest} ({dest.stat().st_size} bytes)')
