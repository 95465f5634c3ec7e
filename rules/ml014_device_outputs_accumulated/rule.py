"""ML014 device-outputs-accumulated."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from memlint.analysis import GradMode, accumulation
from memlint.analysis.bindings import target_names
from memlint.analysis.context import element_pairs
from memlint.analysis.fixes import method_call
from memlint.analysis.host_chunks import moves_host_chunks
from memlint.analysis.iteration import iterates_batches, slices_counted_split
from memlint.analysis.outputs import argument_filled_by_model, model_output, output_elements, self_attribute_outputs, self_output_key
from memlint.analysis.roles import per_batch_function
from memlint.analysis.self_bindings import class_bindings, enclosing_class, loop_bindings
from memlint.analysis.tables import TENSOR_OUTPUT_FIELDS
from memlint.diagnostics import Applicability, Severity
from memlint.rule import Invalid, NodeFix, Rule, Valid
from memlint.rules.ml014_device_outputs_accumulated.meta import META


class DeviceOutputsAccumulated(Rule):
    """
    ## What it does
    Finds model outputs (logits, predictions, features) kept on the accelerator across the
    iterations of a loop over a data split. The ways of keeping them reported, when no `.cpu()`
    comes on the way: `preds.append(output)`, `outs.append(logits.detach())`,
    `feats.extend(model(x))`, a dict of lists (`out["logits"].append(logits)`), a display of outputs
    (`results.append({"preds": preds, "loss": loss})`), a running concatenation
    (`feats = torch.cat([feats, f])`), outputs returned by a helper of the project
    (`preds.append(infer(model, x))`), and a dict that holds outputs (`batch["xyz"] =
    model.decode(z)`, or `model(batch)` writing its outputs into `batch`), kept whole or by key.
    A part of an output is the output: a slice or view (`out[:-1]`, `out.view(n, -1)`) or a row of a loop over it (`for row in output:`) keeps the
    whole output's storage on the device; so is an output normalized (`F.normalize(emb, dim=-1)`) or
    pooled along an axis after the batch's (`feats.mean(dim=1)`): one value per sample or more.
    An attribute a method binds to an output (`self.logits = self.classifier(f)` in a
    `batch_forward` the loop calls) is one, and `self.all = torch.cat((self.all, self.logits))` keeps
    it. A loop over a data split
    iterates something named like a loader (`val_loader`, `test_dataloader`,
    `enumerate(tqdm(loader))`, `test_dataset`, `eval_iterator`, `dataloaders["val"]`,
    `self.data[phase]`), walks one by
    index in batches (`for i in range(0, len(X), batch_size)`, or chunks of a host list it moves to
    the device: `tokenizer(texts[i:i + text_bs]).to(device)`), or samples batches until what it
    collects holds a count of samples (`while len(feats) < num_images:`). Lightning's `validation_step`, `test_step` and
    `predict_step` run once per batch, so appending outputs to `self.<list>` there counts too
    (on the accelerator the Trainer picks, unless the file asks for `accelerator="cpu"`). Elsewhere
    only where something is put on a device: the loop moves its inputs with `.cuda()` or
    `.to(device)`, or, when it moves nothing itself, the file does (`.cuda()`, `.to(...)`,
    `device=`, `accelerator=` other than `"cpu"`).

    Not reported: loops that are not a pass over data — a decoding loop inside a model that
    collects per-step tokens or logits to concatenate them, a loop over chunks or layers — whose
    length does not grow with the dataset; a stride loop that slices one tensor
    (`model(X[i:i + bs])`: `X` may sit on the device whole, so its outputs add no more than it); values moved to the host (`.cpu()`, `.numpy()`, `.tolist()`, `.item()`) or reduced
    to a metric (`.sum()`, `.mean()`, `.mean(0)`, or along `dim=-1`, which may be the batch's axis); lists created inside the loop; values that still carry
    autograd history (that is ML001 accumulated-graph; in a function that every caller in the linted
    files runs under `torch.no_grad()` they carry none, and are reported); values the analysis cannot trace to a model
    call (a helper whose body it cannot see, the file's own function named like a model that
    returns something else). Inputs sent to the model's own device (`x.to(model.device)`) follow the
    model: when nothing in the file moves that model to an accelerator, it is where it was made,
    on the CPU (Lightning moves a module back to the CPU after `trainer.fit`), and so are its outputs.

    ## Why is this bad?
    Every batch's outputs stay in device memory until the loop ends, so memory grows with the size
    of the dataset, and evaluation that fits for the first thousand batches runs out of memory on a
    larger split.

    ## Example
    ```python
    preds = []
    with torch.no_grad():
        for x, _ in test_loader:
            preds.append(model(x.cuda()))
    ```

    ## Use instead
    ```python
    preds = []
    with torch.no_grad():
        for x, _ in test_loader:
            preds.append(model(x.cuda()).detach().cpu())
    ```

    ## Fix safety
    Unsafe: appending `value.detach().cpu()` changes the device of every later use of the list
    (a `torch.cat(preds)` compared with device labels then fails, or runs on the CPU).

    ## Measured effect
    `fixtures/ml014_outputs_accumulated.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): 32,087,968 B before and after:
    on CPU `.cpu()` is a no-op, so the saving only shows on an accelerator, where every batch's
    outputs stay in device memory until the loop ends (batch × classes × 4 bytes per batch for fp32
    logits). A CUDA run of the same fixture (`memlint confirm fixtures --device cuda`) gives the
    device figure.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "unsafe"

    VALID = [
        Valid(  # an attribute bound to an output, then moved by another method the loop calls, or dropped
            """
import torch
class Runner:
    def step(self, x):
        self.logits = self.model(x)
    def to_host(self):
        self.logits = self.logits.detach().cpu()
    def forward_once(self, x):
        self.emb = self.model(x)
        del self.emb
    def evaluate(self, phase="val"):
        self.kept = torch.empty(0)
        self.embs = torch.empty(0)
        with torch.no_grad():
            for x, _ in self.data[phase]:
                self.step(x.cuda())
                self.to_host()
                self.kept = torch.cat((self.kept, self.logits))
                self.forward_once(x.cuda())
                self.embs = torch.cat((self.embs, self.emb))
        return self.kept, self.embs
"""
        ),
        Valid(  # a running tensor that a method called in the loop starts again: one batch's views
            """
import torch
class Voter:
    def restart(self):
        self.votes = torch.empty(0).cuda()
    def evaluate(self, phase="val"):
        with torch.no_grad():
            for x, _ in self.data[phase]:
                self.restart()
                for view in (x, x.flip(3)):
                    self.votes = torch.cat((self.votes, self.model(view.cuda())))
                tally(self.votes)
"""
        ),
        Valid(  # `norm(2)`: the first argument is the order p, not an axis: one number per batch
            """
import torch
@torch.no_grad()
def weight_norms(model, loader, device):
    sizes, totals = [], []
    for x, _ in loader:
        out = model(x.to(device))
        sizes.append(out.norm(2))
        totals.append(torch.norm(out, 2))
    return sizes, totals
"""
        ),
        Valid(  # chunks of a tensor already on the device, or of one batch a helper splits: no pass over data
            """
import torch
@torch.no_grad()
def predict(model, inputs, device, eval_bs=64):
    inputs = inputs.to(device)
    outs = []
    for i in range(0, len(inputs), eval_bs):
        outs.append(model(inputs[i:i + eval_bs].to(device)))
    return torch.cat(outs)
@torch.no_grad()
def split_forward(model, batch, device, micro_bs=4):
    parts = []
    for j in range(0, batch.shape[0], micro_bs):
        parts.append(model(batch[j:j + micro_bs].to(device)))
    return torch.cat(parts)
"""
        ),
        Valid(  # a dict keyed by the split that holds no loaders (augmentations), a `match` in a stride loop
            """
import torch
@torch.no_grad()
def tta(model, image, augmentations, phase, device):
    outs = []
    for aug in augmentations[phase]:
        outs.append(model(aug(image).to(device)))
    return outs
@torch.no_grad()
def encode(model, loader, device, text_bs=32):
    texts = loader.dataset.text
    for i in range(0, len(texts), text_bs):
        match i:
            case 0:
                print("first")
"""
        ),
        Valid(  # a container mixing a model with metrics: a metric's `load_state_dict` proves no entry a model
            """
import torch
class Evaluator:
    def evaluate(self, loader, saved):
        for k in self.metrics:
            self.metrics[k].load_state_dict(saved[k])
        self.scores = torch.empty(0).cuda()
        with torch.no_grad():
            for x, y in loader:
                preds = self.net(x.cuda())
                self.scores = torch.cat((self.scores, self.metrics["acc"](preds, y.cuda())))
        return self.scores
"""
        ),
        Valid(  # a collection never shown to hold models; an attribute moved to the host; one restarted every batch
            """
import torch
class Runner:
    def step(self, x):
        self.scores = self.heads["main"](x)
        self.probs = self.model(x).softmax(1).cpu()
    def evaluate(self, split="val"):
        self.all_scores = torch.empty(0).cuda()
        self.all_probs = torch.empty(0)
        with torch.no_grad():
            for x, _ in self.data[split]:
                self.step(x.cuda())
                self.all_scores = torch.cat((self.all_scores, self.scores))
                self.all_probs = torch.cat((self.all_probs, self.probs))
                self.batch_out = None
                self.batch_out = torch.cat((self.batch_out, self.model(x.cuda())))
        return self.all_scores, self.all_probs, self.batch_out
"""
        ),
        Valid(  # chunks of a host collection moved one by one, but each chunk's list (or tensor) is made anew
            """
import torch
@torch.no_grad()
def encode_captions(model, captions, device):
    num = len(captions)
    caption_bs = 128
    for start in range(0, num, caption_bs):
        codes = []
        chunk = captions[start:start + caption_bs]
        ids = model.tokenizer(chunk, return_tensors="pt").to(device)
        codes.append(model.text_head(ids.input_ids))
        save(codes)
    for start in range(0, num, caption_bs):
        chunk = captions[start:start + caption_bs]
        ids = model.tokenizer(chunk, return_tensors="pt").to(device)
        feats = None
        feats = torch.cat([feats, model.text_head(ids.input_ids)])
        save(feats)
"""
        ),
        Valid(  # reduced along the batch's axis, or an axis that may be it (`dim=-1` of a one-value-per-sample output): a metric per batch
            """
import torch
@torch.no_grad()
def stats(model, loader, device):
    means, scores = [], []
    for x, _ in loader:
        out = model(x.to(device))
        means.append(out.mean(0))
        scores.append(out.sum(dim=-1))
    return means, scores
"""
        ),
        Valid(  # chunks of one long signal (a step not named like a batch size): one sample's outputs, needed whole
            """
import torch
@torch.no_grad()
def transcribe(model, wave, hop, device):
    pieces = []
    for i in range(0, wave.shape[-1], hop):
        piece = wave[i:i + hop].to(device)
        pieces.append(model(piece))
    return torch.cat(pieces)
"""
        ),
        Valid(  # every caller runs it under no_grad, but it turns gradients back on itself: the outputs carry history (ML001's)
            """
import torch
def gather(model, loader):
    kept = []
    for x, _ in loader:
        with torch.enable_grad():
            kept.append(model(x.cuda()))
    return kept
def gather_on(model, loader):
    kept = []
    torch.set_grad_enabled(True)
    for x, _ in loader:
        kept.append(model(x.cuda()))
    return kept
def run(model, loader):
    with torch.no_grad():
        a = gather(model, loader)
        b = gather_on(model, loader)
    return a, b
"""
        ),
        Valid(  # iterating an output of unknown type: a detector's list of dicts, a dict's string keys; no tensor use of the row
            """
import torch
def detect(model, loader):
    found, names = [], []
    with torch.no_grad():
        for images, _ in loader:
            results = model([im.cuda() for im in images])
            for r in results:
                found.append(r)
            for k in results:
                names.append(k)
            for r in results:
                found.append(r["boxes"].cpu())
    return found, names
"""
        ),
        Valid(  # a swap: each name takes the other's old value, read before either is bound
            """
import torch
def evaluate(model, loader):
    kept = []
    with torch.no_grad():
        for x, y in loader:
            tags = y.tolist()
            pred = model(x.cuda())
            tags, pred = pred, tags
            kept.append(pred)
    return kept
"""
        ),
        Valid(  # the rows of each batch's output, each moved to the host before it is kept
            """
import torch
def embed(model, loader):
    feats = []
    with torch.no_grad():
        for x, _ in loader:
            output = model(x.cuda())
            for row in output:
                feats.append(row[:-1].cpu())
    return torch.stack(feats)
"""
        ),
        Valid(  # a caller runs it with gradients on: what it keeps carries history (ML001's finding), not ML014's
            """
import torch
def embed(model, loader):
    feats = []
    for x, _ in loader:
        out = model(x.cuda())
        feats.append(out[:, :-1])
    return torch.cat(feats)
def main(model, loader):
    with torch.no_grad():
        embed(model, loader)
    embed(model, loader).sum().backward()
"""
        ),
        Valid(  # a loop over the loaders themselves: each iteration is a whole pass, its list made anew
            """
import torch
def predict(model, dataloaders, device):
    for name, loader in dataloaders.items():
        with torch.no_grad():
            preds = [model(x.to(device)).cpu() for x, _ in loader]
        save(name, preds)
"""
        ),
        Valid(  # a `while` decoding loop bounded by a sequence length, not a count of samples
            """
import torch
model = Net().cuda()
tokens = []
with torch.no_grad():
    while len(tokens) < max_length:
        logits = model(x.cuda())
        tokens.append(logits)
"""
        ),
        Valid(
            """
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()).cpu())
"""
        ),
        Valid(  # a stride loop slicing one tensor, which may sit on the device whole: its outputs add no more
            """
import torch
model = Net().cuda()
def embed(model, images, batch_size):
    devX = torch.FloatTensor(images).cuda()
    embeds = []
    with torch.no_grad():
        for i in range(0, len(devX), batch_size):
            embeds.append(model(devX[i:i + batch_size]))
    return torch.cat(embeds, 0)
"""
        ),
        Valid(  # a reduced metric
            """
import torch
scores = []
with torch.no_grad():
    for x, y in loader:
        out = model(x.to(device))
        scores.append((out.argmax(1) == y).float().mean())
"""
        ),
        Valid(  # graph-carrying: ML001's business
            """
import torch
outs = []
for x in loader:
    outs.append(model(x.cuda()))
"""
        ),
        Valid(  # a dtype is not a device: `.to(torch.float16)` keeps the batch on the CPU
            """
import torch
def predict(model, test_loader):
    preds = []
    with torch.no_grad():
        for x, _ in test_loader:
            preds.append(model(x.to(torch.float16)))
    return torch.cat(preds)
"""
        ),
        Valid(  # no device anywhere in the file
            """
import torch
preds = []
with torch.no_grad():
    for x in loader:
        preds.append(model(x))
"""
        ),
        Valid(  # a list created per iteration
            """
import torch
with torch.no_grad():
    for x in loader:
        batch_out = []
        batch_out.append(model(x.cuda()))
        save(batch_out)
"""
        ),
        Valid(  # a decoding loop inside a model: bounded by the sequence length, and needed on the device
            """
import torch
tokens = []
for _ in range(max_length):
    logits = self.decoder(hidden.to(device))
    next_token = logits.argmax(-1)
    tokens.append(next_token)
"""
        ),
        Valid(  # a helper's result we cannot trace
            """
import torch
preds = []
with torch.no_grad():
    for x in loader:
        preds.append(postprocess(x.cuda()))
"""
        ),
        Valid(  # inputs follow a model nothing moves: Lightning leaves it on the CPU after fit
            """
import torch
import lightning as L
device = torch.device("cuda:0")
trainer = L.Trainer(accelerator="gpu", max_epochs=10)
trainer.fit(model, train_loader)
def embed_imgs(model, data_loader):
    embed_list = []
    model.eval()
    for imgs, _ in data_loader:
        with torch.no_grad():
            z = model.encoder(imgs.to(model.device))
        embed_list.append(z)
    return torch.cat(embed_list, dim=0)
"""
        ),
        Valid(  # inputs follow the device of a model the file never moves (not a configured device like `args.device`)
            """
import torch
model = Flow()
flow_args = parse()
def score(test_loader):
    kept = []
    with torch.no_grad():
        for x, _ in test_loader:
            kept.append(model.log_density(x.to(model.device)))
    return kept
config_device = torch.device(flow_args.device)
"""
        ),
        Valid(  # joined inputs are no model output; a join of outputs moved to the host first is on the host
            """
import torch
@torch.no_grad()
def encode(model, loader, device):
    codes, inputs = [], []
    for x, _ in loader:
        parts, _ = model(x.to(device))
        inputs.append(torch.cat([t.flatten(1) for t in x.to(device).split(2)], dim=1))
        codes.append(torch.cat([p.cpu().flatten(1) for p in parts], dim=1))
    return codes, inputs
"""
        ),
        Valid(  # what the code put into the dict the model fills is its input; a tensor handed to a model is only read
            """
import torch
def features(model, iterator, device):
    inputs_kept, raw_kept, rows = [], [], []
    with torch.no_grad():
        for i, batch in enumerate(iterator):
            inputs = {}
            inputs["x"] = batch.to(device)
            model(inputs)
            inputs_kept.append(inputs["x"].float())
            x = batch.to(device)
            model(x)
            raw_kept.append(x)
            row = dict()
            row["x"] = x
            rows.append(row)
    return inputs_kept, raw_kept, rows
"""
        ),
        Valid(  # a bare `iterator` whose loop binds no batch may walk anything else
            """
import torch
model = Net().cuda()
def walk(iterator):
    kept = []
    with torch.no_grad():
        for item in iterator:
            kept.append(model(item.cuda()))
    return kept
"""
        ),
        Valid(  # the file's own helper named like a model returns a Python float
            """
import torch
scores = []
with torch.no_grad():
    for x, y in test_loader:
        scores.append(test_model(x.cuda(), y))
def test_model(x, y):
    return float((x.sum() == y.sum()))
"""
        ),
        Valid(  # a list made for each batch, filled by the batch's glimpses: bounded, not the dataset
            """
import torch
@torch.no_grad()
def validate(model, valid_loader, device, num_glimpses):
    for x, y in valid_loader:
        x = x.to(device)
        h_t, l_t = model.reset()
        baselines = []
        for t in range(num_glimpses):
            h_t, l_t, b_t = model(x, l_t, h_t)
            baselines.append(b_t)
        score(torch.stack(baselines), y)
"""
        ),
        Valid(  # a cache of latents, filled once and read back by every training step (diffusers-style)
            """
import torch
vae = AutoencoderKL.from_pretrained("vae").to("cuda")
latents_cache = []
with torch.no_grad():
    for batch in train_dataloader:
        latents_cache.append(vae.encode(batch["pixel_values"].to("cuda")).latent_dist)
train_dataset = LatentsDataset(latents_cache)
"""
        ),
        Valid(  # a model loaded from a checkpoint and never moved: on the CPU, whatever else is on a device
            """
import torch
device = torch.device("cuda")
model = Classifier.load_from_checkpoint("best.ckpt")
model.eval()
preds = []
with torch.no_grad():
    for x, y in test_loader:
        preds.append(model(x))
baseline = Baseline().to(device)
"""
        ),
        Valid(  # a running concatenation started again for every batch: one batch's chunks
            """
import torch
model = Net().cuda()
with torch.no_grad():
    for x, _ in test_loader:
        feats = None
        for chunk in x.split(4):
            f = model(chunk.cuda())
            feats = f if feats is None else torch.cat([feats, f])
        save(feats.cpu())
"""
        ),
    ]

    INVALID = [
        Invalid(  # a loader picked by split; a method the loop calls binds `self.scores` to an output of a collection of models
            """
import torch
import torch.nn as nn
class Runner:
    def build(self, names):
        self.nets = {}
        for name in names:
            self.nets[name] = nn.DataParallel(make(name)).cuda()
            self.params = list(self.nets[name].parameters())
    def step(self, x):
        self.feats = self.nets["backbone"](x)
        self.scores = self.nets["head"](self.feats)
    def evaluate(self, split="val"):
        self.all_scores = torch.empty(0).cuda()
        with torch.no_grad():
            for x, _ in self.data[split]:
                self.step(x.cuda())
                self.all_scores = torch.cat((self.all_scores, self.scores))
        return self.all_scores
""",
            line=17,
            column=17,
        ),
        Invalid(  # pooled over frames (an axis after the batch's) and normalized: still one embedding per sample
            """
import torch
import torch.nn.functional as F
@torch.no_grad()
def embed_clips(model, loader, device):
    kept = []
    for clips, _ in loader:
        frames = model.encoder(clips.to(device))
        pooled = model.proj(frames).mean(dim=1)
        kept.append(F.normalize(pooled, dim=-1))
    return torch.cat(kept)
""",
            line=9,
            column=9,
            unsafe=True,
            fixed="""
import torch
import torch.nn.functional as F
@torch.no_grad()
def embed_clips(model, loader, device):
    kept = []
    for clips, _ in loader:
        frames = model.encoder(clips.to(device))
        pooled = model.proj(frames).mean(dim=1)
        kept.append(F.normalize(pooled, dim=-1).detach().cpu())
    return torch.cat(kept)
""",
        ),
        Invalid(  # a host list of captions walked in chunks, each chunk tokenized and moved: outputs grow with the list
            """
import torch
@torch.no_grad()
def encode_captions(model, loader, device):
    captions = loader.dataset.captions
    num = len(captions)
    caption_bs = 128
    codes = []
    for start in range(0, num, caption_bs):
        chunk = captions[start:min(num, start + caption_bs)]
        ids = model.tokenizer(chunk, return_tensors="pt").to(device)
        codes.append(model.text_head(ids.input_ids))
    return torch.cat(codes)
""",
            line=11,
            column=9,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def encode_captions(model, loader, device):
    captions = loader.dataset.captions
    num = len(captions)
    caption_bs = 128
    codes = []
    for start in range(0, num, caption_bs):
        chunk = captions[start:min(num, start + caption_bs)]
        ids = model.tokenizer(chunk, return_tensors="pt").to(device)
        codes.append(model.text_head(ids.input_ids).detach().cpu())
    return torch.cat(codes)
""",
        ),
        Invalid(  # gradients on and no caller turns them off: the argmax (no history) is still kept on the device per batch
            """
import torch
def score(model, loader):
    rows = []
    for x, _ in loader:
        pred = model(x.cuda())
        rows.append({"label": pred.argmax(1), "raw": pred})
    return rows
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def score(model, loader):
    rows = []
    for x, _ in loader:
        pred = model(x.cuda())
        rows.append({"label": pred.argmax(1).cpu(), "raw": pred})
    return rows
""",
        ),
        Invalid(  # a slice of each row of the output: a view, which keeps the whole output's storage on the device
            """
import torch
def embed(model, loader):
    feats = []
    with torch.no_grad():
        for x, _ in loader:
            output = model(x.cuda()).squeeze()
            for row in output:
                feat, tag = row[:-1], row[-1].long()
                if tag >= 0:
                    feats.append(feat)
    return torch.stack(feats)
""",
            line=10,
            column=21,
            unsafe=True,
            fixed="""
import torch
def embed(model, loader):
    feats = []
    with torch.no_grad():
        for x, _ in loader:
            output = model(x.cuda()).squeeze()
            for row in output:
                feat, tag = row[:-1], row[-1].long()
                if tag >= 0:
                    feats.append(feat.detach().cpu())
    return torch.stack(feats)
""",
        ),
        Invalid(  # no no_grad in the function, but every caller runs it under one: its outputs carry no history
            """
import torch
def embed(model, loader):
    feats = []
    for x, _ in loader:
        out = model(x.cuda())
        feats.append(out[:, :-1])
    return torch.cat(feats)
def main(model, loader):
    with torch.no_grad():
        return embed(model, loader)
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def embed(model, loader):
    feats = []
    for x, _ in loader:
        out = model(x.cuda())
        feats.append(out[:, :-1].detach().cpu())
    return torch.cat(feats)
def main(model, loader):
    with torch.no_grad():
        return embed(model, loader)
""",
        ),
        Invalid(  # the loader of one split taken by key from a dict of loaders (torchvision's tutorial spelling)
            """
import torch
def predict(model, dataloaders, device):
    preds = []
    with torch.no_grad():
        for x, _ in dataloaders["val"]:
            preds.append(model(x.to(device)))
    return preds
""",
            line=6,
            column=13,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
def predict(model, dataloaders, device):
    preds = []
    with torch.no_grad():
        for x, _ in dataloaders["val"]:
            preds.append(model(x.to(device)).detach().cpu())
    return preds
""",
        ),
        Invalid(  # inputs sent to the configured device (`args.device`), outputs of a model's method kept
            """
import torch
@torch.no_grad()
def score(model, test_loader, args):
    model.eval()
    kept = []
    for x, _ in test_loader:
        x = x.to(args.device)
        kept.append(model.log_density(x))
    return torch.cat(kept)
""",
            line=8,
            column=9,
            unsafe=True,
            fixed="""
import torch
@torch.no_grad()
def score(model, test_loader, args):
    model.eval()
    kept = []
    for x, _ in test_loader:
        x = x.to(args.device)
        kept.append(model.log_density(x).detach().cpu())
    return torch.cat(kept)
""",
        ),
        Invalid(  # each batch's outputs (a tuple of tensors) joined into one tensor, kept; every caller runs it without gradients
            """
import torch
def encode(model, loader, device):
    codes = []
    for x, _ in loader:
        parts, _ = model(x.to(device))
        codes.append(torch.cat([p.flatten(1) for p in parts], dim=1))
    return torch.cat(codes)
@torch.no_grad()
def main(model, loader, device):
    return encode(model, loader, device)
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def encode(model, loader, device):
    codes = []
    for x, _ in loader:
        parts, _ = model(x.to(device))
        codes.append(torch.cat([p.flatten(1) for p in parts], dim=1).detach().cpu())
    return torch.cat(codes)
@torch.no_grad()
def main(model, loader, device):
    return encode(model, loader, device)
""",
        ),
        Invalid(  # a model that writes its outputs into the dict it is handed; the batches come from an `iterator`
            """
import torch
def features(model, iterator, device):
    kept = []
    with torch.no_grad():
        for i, batch in enumerate(iterator):
            inputs = {}
            inputs["x"] = batch.to(device)
            model(inputs)
            kept.append(inputs["feats"])
    return torch.cat(kept)
""",
            line=9,
            column=13,
            message="grows with the size of the dataset",
        ),
        Invalid(  # a dict filled with a model method's output, kept whole for every batch of a `dataiterator`
            """
import torch
class Decoded:
    def __init__(self, model, dataiterator, device):
        self.batches = []
        with torch.no_grad():
            for x, extra in dataiterator:
                batch = dict()
                batch["input"] = x.to(device)
                batch["decoded"] = model.decode(z=batch["input"], smooth=True)
                self.batches.append(batch)
""",
            line=10,
            column=17,
            message="grows with the size of the dataset",
        ),
        Invalid(  # an iterator of batches named `eval_iterator`
            """
import torch
def predict(model, eval_iterator, device):
    preds = []
    with torch.no_grad():
        for batch in eval_iterator:
            preds.append(model(batch.to(device)))
    return preds
""",
            line=6,
            column=13,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
def predict(model, eval_iterator, device):
    preds = []
    with torch.no_grad():
        for batch in eval_iterator:
            preds.append(model(batch.to(device)).detach().cpu())
    return preds
""",
        ),
        Invalid(  # a loop that samples batches until it holds a count of images (an Inception-score pass)
            """
import torch
def accumulate_activations(sample, net, num_images=50000):
    pool = []
    while (torch.cat(pool, 0).shape[0] if len(pool) else 0) < num_images:
        with torch.no_grad():
            images, labels = sample()
            pool_val, logits_val = net(images.float())
            pool += [pool_val]
    return torch.cat(pool, 0)
net = load_net().cuda()
""",
            line=8,
            column=13,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
def accumulate_activations(sample, net, num_images=50000):
    pool = []
    while (torch.cat(pool, 0).shape[0] if len(pool) else 0) < num_images:
        with torch.no_grad():
            images, labels = sample()
            pool_val, logits_val = net(images.float())
            pool += [pool_val.detach().cpu()]
    return torch.cat(pool, 0)
net = load_net().cuda()
""",
        ),
        Invalid(  # a marimo notebook: `torch` is the cell parameter the importing cell returns, so this is no_grad
            """
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    return (torch,)


@app.cell
def _(loader, model, torch):
    preds = []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x.cuda()))
    return (preds,)
""",
            line=17,
            column=13,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import marimo

app = marimo.App()


@app.cell
def _():
    import torch
    return (torch,)


@app.cell
def _(loader, model, torch):
    preds = []
    with torch.no_grad():
        for x, y in loader:
            preds.append(model(x.cuda()).detach().cpu())
    return (preds,)
""",
        ),
        Invalid(
            """
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()))
""",
            line=5,
            column=9,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()).detach().cpu())
""",
        ),
        Invalid(  # a list grown by concatenation with a display keeps the display's elements (issue 27)
            """
import torch
@torch.no_grad()
def predict(model, test_loader):
    model.eval()
    preds = []
    for x, _ in test_loader:
        logits = model(x.cuda())
        preds += [logits]
    return torch.cat(preds)
""",
            line=8,
            column=9,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
@torch.no_grad()
def predict(model, test_loader):
    model.eval()
    preds = []
    for x, _ in test_loader:
        logits = model(x.cuda())
        preds += [logits.detach().cpu()]
    return torch.cat(preds)
""",
        ),
        Invalid(  # a split walked by index in batches (`range(0, len(graphs), batch_size)`): a pass over data
            """
import torch
model = Net().to(device)
def pass_data(model, graphs, batch_size=64):
    model.eval()
    output = []
    idx = np.arange(len(graphs))
    for i in range(0, len(graphs), batch_size):
        output.append(model([graphs[j] for j in idx[i:i + batch_size]]).detach())
    return torch.cat(output, 0)
""",
            line=8,
            column=9,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
model = Net().to(device)
def pass_data(model, graphs, batch_size=64):
    model.eval()
    output = []
    idx = np.arange(len(graphs))
    for i in range(0, len(graphs), batch_size):
        output.append(model([graphs[j] for j in idx[i:i + batch_size]]).detach().cpu())
    return torch.cat(output, 0)
""",
        ),
        Invalid(  # detached logits through a name, with gradients on
            """
import torch
all_logits = []
for batch in val_loader:
    outputs = model(**{k: v.to(device) for k, v in batch.items()})
    logits = outputs.logits.detach()
    all_logits.append(logits)
""",
            line=6,
            column=5,
            unsafe=True,
            fixed="""
import torch
all_logits = []
for batch in val_loader:
    outputs = model(**{k: v.to(device) for k, v in batch.items()})
    logits = outputs.logits.detach()
    all_logits.append(logits.cpu())
""",
        ),
        Invalid(  # a dict of lists, with the outputs of a tuple-returning model
            """
import torch
def collect(model, loader, device):
    out = {"mu": [], "logvar": []}
    with torch.no_grad():
        for x, _ in loader:
            x_hat, mu, logvar = model(x.to(device))
            out["mu"].append(mu)
    return out
""",
            line=7,
            column=13,
            unsafe=True,
            fixed="""
import torch
def collect(model, loader, device):
    out = {"mu": [], "logvar": []}
    with torch.no_grad():
        for x, _ in loader:
            x_hat, mu, logvar = model(x.to(device))
            out["mu"].append(mu.detach().cpu())
    return out
""",
        ),
        Invalid(  # a helper that returns the model's output
            """
import torch
def infer(model, x):
    return model(x)
def run(model, loader, device):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(infer(model, x.to(device)))
    return torch.cat(preds).cpu()
""",
            line=8,
            column=13,
            unsafe=True,
            fixed="""
import torch
def infer(model, x):
    return model(x)
def run(model, loader, device):
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(infer(model, x.to(device)).detach().cpu())
    return torch.cat(preds).cpu()
""",
        ),
        Invalid(  # a running concatenation (reported without a fix: its first operand stays on the device)
            """
import torch
feats = None
with torch.no_grad():
    for x, _ in test_loader:
        f = encoder(x.cuda())
        feats = f if feats is None else torch.cat([feats, f])
""",
            line=6,
            column=9,
        ),
        Invalid(  # Lightning calls validation_step once per batch of the evaluation
            """
import torch
import lightning as L
class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 4)
        self.outputs = []
    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        preds = torch.argmax(logits, dim=1)
        self.outputs.append({"preds": preds, "labels": y})
    def on_validation_epoch_end(self):
        preds = torch.cat([o["preds"] for o in self.outputs])
        self.outputs.clear()
trainer = L.Trainer(accelerator="gpu")
""",
            line=12,
            column=9,
            unsafe=True,
            message="once per batch",
            fixed="""
import torch
import lightning as L
class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 4)
        self.outputs = []
    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        preds = torch.argmax(logits, dim=1)
        self.outputs.append({"preds": preds.detach().cpu(), "labels": y})
    def on_validation_epoch_end(self):
        preds = torch.cat([o["preds"] for o in self.outputs])
        self.outputs.clear()
trainer = L.Trainer(accelerator="gpu")
""",
        ),
        Invalid(  # Lightning 1.x keeps every batch's return of validation_step for validation_epoch_end
            """
import torch
import pytorch_lightning as pl
class Classifier(pl.LightningModule):
    def forward(self, input_ids, labels=None):
        return self.model(input_ids=input_ids, labels=labels)
    def validation_step(self, batch, batch_idx):
        outputs = self.forward(batch["input_ids"], labels=batch["label"])
        return {"labels": batch["label"], "logits": outputs.logits}
    def validation_epoch_end(self, outputs):
        logits = torch.cat([x["logits"] for x in outputs])
trainer = pl.Trainer(gpus=1)
""",
            line=8,
            column=9,
            unsafe=True,
            message="Lightning 1.x keeps what `validation_step` returns",
            fixed="""
import torch
import pytorch_lightning as pl
class Classifier(pl.LightningModule):
    def forward(self, input_ids, labels=None):
        return self.model(input_ids=input_ids, labels=labels)
    def validation_step(self, batch, batch_idx):
        outputs = self.forward(batch["input_ids"], labels=batch["label"])
        return {"labels": batch["label"], "logits": outputs.logits.detach().cpu()}
    def validation_epoch_end(self, outputs):
        logits = torch.cat([x["logits"] for x in outputs])
trainer = pl.Trainer(gpus=1)
""",
        ),
        Invalid(  # a distribution is no tensor: reported without the `.detach().cpu()` fix
            """
import torch
vae = AutoencoderKL.from_pretrained("vae").to("cuda")
dists = []
with torch.no_grad():
    for batch in val_dataloader:
        dists.append(vae.encode(batch["pixel_values"].to("cuda")).latent_dist)
""",
            line=6,
            column=9,
        ),
        Invalid(  # accelerate gathers the predictions on the device; the labels beside them are no output
            """
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model, eval_dataloader = accelerator.prepare(model, eval_dataloader)
all_preds, all_refs = [], []
for batch in eval_dataloader:
    with torch.no_grad():
        outputs = model(**batch)
    predictions = outputs.logits.argmax(dim=-1)
    predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
    all_preds.append(predictions)
    all_refs.append(references)
""",
            line=11,
            column=5,
            unsafe=True,
            fixed="""
import torch
from accelerate import Accelerator
accelerator = Accelerator()
model, eval_dataloader = accelerator.prepare(model, eval_dataloader)
all_preds, all_refs = [], []
for batch in eval_dataloader:
    with torch.no_grad():
        outputs = model(**batch)
    predictions = outputs.logits.argmax(dim=-1)
    predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
    all_preds.append(predictions.cpu())
    all_refs.append(references)
""",
        ),
        Invalid(  # Lightning 1.x detaches what training_step returns and keeps it for training_epoch_end
            """
import torch
import pytorch_lightning as pl
class Classifier(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        return {"loss": loss, "logits": logits}
    def training_epoch_end(self, outputs):
        logits = torch.cat([o["logits"] for o in outputs])
trainer = pl.Trainer(gpus=1)
""",
            line=8,
            column=9,
            unsafe=True,
            message="Lightning 1.x keeps what `training_step` returns",
            fixed="""
import torch
import pytorch_lightning as pl
class Classifier(pl.LightningModule):
    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        return {"loss": loss, "logits": logits.detach().cpu()}
    def training_epoch_end(self, outputs):
        logits = torch.cat([o["logits"] for o in outputs])
trainer = pl.Trainer(gpus=1)
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._outputs: dict[Optional[tuple], set[str]] = {}  # function -> names bound to model outputs
        self._candidates: list[_Candidate] = []
        self._not_tensors: dict[Optional[tuple], set[str]] = {}  # function -> names bound to a non-tensor field
        # function -> names bound to a dict made there -> the string keys the code set itself (no outputs)
        self._dicts: dict[Optional[tuple], dict[str, set[str]]] = {}
        # (class, method) -> the attributes of `self` the method binds to a model output (`self.logits =
        # self.classifier(feats)` in a `batch_forward` the evaluation loop calls); methods seen so far
        self._method_outputs: dict[tuple[str, str], set[str]] = {}

    def _known(self) -> set[str]:
        return self._outputs.setdefault(self.ctx.function_key, set())

    def visit_Assign(self, node: cst.Assign) -> None:
        known = self._known()
        if self._paired_elements(node, known):
            return
        is_output = model_output(node.value, self.ctx, known) and not self._own_entry(node.value)
        for target in node.targets:
            self._note_dict(target.target, node.value, is_output)
            self._note_self_outputs(target.target, node.value, known)
            # `outputs = model(x)`, and `val_loss, logits = outputs[:2]`: each element is an output too
            names = [target.target] if isinstance(target.target, cst.Name) else [
                e.value for e in getattr(target.target, "elements", ()) if isinstance(e.value, cst.Name)
            ]
            untyped = self._not_tensors.setdefault(self.ctx.function_key, set())
            for name in names:
                (known.add if is_output else known.discard)(name.value)  # type: ignore[union-attr]
                (untyped.add if is_output and not self._known_tensor(node.value) else untyped.discard)(name.value)  # type: ignore[union-attr]
        if len(node.targets) == 1 and self.ctx.in_loop:
            self._concatenation(node, node.targets[0].target)

    def _note_self_outputs(self, target: cst.BaseExpression, value: cst.BaseExpression, known: set[str]) -> None:
        """`self.logits = self.fc(feats)`: the attribute holds an output from here on in this function,
        and after every call of this method (`visit_Call`)."""
        bound = self_attribute_outputs(target, value, self.ctx, known)
        if not bound:
            return
        method = self.ctx.function_node
        owner = self.ctx.class_name
        cls = enclosing_class(self.ctx)
        bindings = class_bindings(cls) if cls is not None else {}
        for attribute, is_output in bound:
            # only an attribute the class binds once, here: any other binding (`self.logits =
            # self.logits.cpu()`, `del self.logits`, in this method or one the loop calls) may change it
            is_output = is_output and len(bindings.get(attribute, ())) == 1
            (known.add if is_output else known.discard)(self_output_key(attribute))
            if is_output and method is not None and owner is not None:
                self._method_outputs.setdefault((owner, method.name.value), set()).add(attribute)

    def _note_dict(self, target: cst.BaseExpression, value: cst.BaseExpression, is_output: bool) -> None:
        """`batch = dict()`, then `batch["xyz"] = model.decode(z)`: a dict the function fills with a
        model output holds it (kept whole, `batches.append(batch)`, it keeps the output); the keys it
        sets to anything else (`batch["x"] = x.to(device)`) are its own, no outputs."""
        dicts = self._dicts.setdefault(self.ctx.function_key, {})
        if isinstance(target, cst.Name):
            if _fresh_dict(value):
                dicts[target.value] = set()
            else:
                dicts.pop(target.value, None)
            return
        if not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
            return
        name = target.value.value
        if name not in dicts:
            return
        if is_output:
            self._known().add(name)
            self._not_tensors.setdefault(self.ctx.function_key, set()).add(name)  # a dict: no `.cpu()` on it
        else:
            key = _string_key(target)
            if key is not None:
                dicts[name].add(key)

    def visit_Expr(self, node: cst.Expr) -> None:
        """`model(batch)`, its result dropped, with `batch` a dict the function made: the model writes
        its outputs into the dict (outputs.argument_filled_by_model); what the function set itself
        stays its own (`_own_entry`)."""
        name = argument_filled_by_model(node, self.ctx)
        if name is not None and name in self._dicts.get(self.ctx.function_key, {}):
            self._known().add(name)
            self._not_tensors.setdefault(self.ctx.function_key, set()).add(name)

    def _own_entry(self, value: cst.BaseExpression) -> bool:
        """`batch["x"]` (or `batch["x"].float()`) where the function set `batch["x"]` itself: the
        entry is what it put in the dict (an input), not what the model wrote there."""
        while True:
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                value = value.func.value
            elif isinstance(value, cst.Subscript):
                key = _string_key(value)
                if key is not None and isinstance(value.value, cst.Name):
                    return key in self._dicts.get(self.ctx.function_key, {}).get(value.value.value, ())
                value = value.value
            else:
                return False

    def _paired_elements(self, node: cst.Assign, known: set[str]) -> bool:
        """`preds, refs = accelerator.gather_for_metrics((preds, batch["labels"]))`, or `feat, label =
        out[:-1], out[-1]`: each name takes what the element in its place was (the labels are no
        model output), every element read before any name is bound (`a, b = b, a` swaps)."""
        if len(node.targets) != 1:
            return False
        pairs = element_pairs(node.targets[0].target, node.value)
        if pairs is None:
            return False
        answers = [
            (target, model_output(source, self.ctx, known), source) for target, source in pairs
        ]  # fmt: skip
        answers = [(target, is_output, is_output and not self._known_tensor(source)) for target, is_output, source in answers]
        untyped = self._not_tensors.setdefault(self.ctx.function_key, set())
        for target, is_output, not_tensor in answers:
            if isinstance(target, cst.Name):
                (known.add if is_output else known.discard)(target.value)
                (untyped.add if not_tensor else untyped.discard)(target.value)
        return True

    def visit_For(self, node: cst.For) -> None:
        # `for out in output:` binds a part of the output (a row: a view of its storage) to `out`
        known = self._known()
        parts = output_elements(node, self.ctx, known)
        untyped = self._not_tensors.setdefault(self.ctx.function_key, set())
        for name in target_names(node.target):
            (known.add if name in parts else known.discard)(name)
            untyped.discard(name)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        receiver, owner = func.value, self.ctx.class_name
        if type(receiver) is cst.Name and receiver.value == "self" and owner is not None:
            # `self.batch_forward(inputs)`: the attributes that method binds to outputs now hold them
            bound = self._method_outputs.get((owner, func.attr.value))
            if bound:
                self._known().update(self_output_key(a) for a in bound)
        if func.attr.value not in ("append", "extend") or len(node.args) != 1:
            return
        self._keep(node, func.value, node.args[0].value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """`preds += [out]`: a list grown by concatenation keeps the display's elements."""
        if isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            self._keep(node, node.target, node.value)

    def _keep(self, node: cst.CSTNode, accumulator: cst.BaseExpression, kept: cst.BaseExpression) -> None:
        """`accumulator` keeps `kept` (a value, or a display's elements) beyond the statement `node`."""
        ctx = self.ctx
        holder = accumulation.holder(accumulator)
        if not isinstance(holder, (cst.Name, cst.Attribute)):
            return
        hook = _evaluation_hook(ctx, accumulator)
        if hook is None:
            if not ctx.in_loop or not any(_passes_over_data(loop, ctx) for loop in ctx.loops):
                return  # a decoding loop inside a model, a loop over layers or chunks: bounded, and needed
            if isinstance(holder, cst.Name) and accumulation.made_per_batch(ctx, holder.value, over_batches_test=lambda loop: _over_batches(loop, ctx)):
                return  # a list made for each batch (its glimpses, its decoding steps)
        elements = accumulation.kept_values(kept)
        outputs = [e for e in elements if self._on_device_output(e) and not self._own_entry(e)]
        if not outputs:
            return
        if hook is None and isinstance(holder, cst.Name):
            scope = ctx.function_node if ctx.function_node is not None else ctx.module
            if ctx.model.read_back_as_data(scope, holder.value):
                return  # a cache of latents or embeddings that every training step reads back
        self._add(node, outputs, ctx.module.code_for_node(accumulator), hook)

    def visit_Return(self, node: cst.Return) -> None:
        """`return {"labels": y, "logits": logits}` from a step hook whose returns Lightning 1.x keeps
        for the epoch-end hook (`validation_epoch_end(self, outputs)`): every batch's outputs stay."""
        ctx = self.ctx
        value = node.value
        if value is None or ctx.in_loop:
            return
        epoch_end = ctx.model.kept_by_framework(ctx.function_node)
        if epoch_end is None:
            return
        elements = accumulation.kept_values(value)
        # Lightning detaches what it keeps of `training_step`'s return (the loss too): with history
        # or not, the kept value is an output on the device
        detached_by_framework = epoch_end == "training_epoch_end"
        outputs = [
            e for e in elements
            if (model_output(e, ctx, self._known()) if detached_by_framework else self._on_device_output(e))
        ]  # fmt: skip
        if outputs:
            self._add(node, outputs, f"{epoch_end}(outputs)", ctx.function_node.name.value, kept=True, detached=detached_by_framework)  # type: ignore[union-attr]

    def _add(self, node: cst.CSTNode, outputs: list, accumulator: str, hook: Optional[str], kept: bool = False, detached: bool = False) -> None:
        """`detached`: the framework that keeps the values detaches them (Lightning's `training_step` returns)."""
        loop = None if hook is not None else self.ctx.loop
        typed = all(self._known_tensor(v) for v in outputs)
        chain = None if detached else self._needs_no_grad_callers(outputs)
        candidate = _Candidate(node, outputs, accumulator, self._detached(outputs), hook, self._evidence(hook), loop, typed, kept, chain)
        if chain is not None:
            # `{"pred": out.argmax(1), "logits": out}`: the history-free part is kept on the device
            # whatever the callers do; it alone is the finding where they do not turn gradients off
            free = [v for v in outputs if self.ctx.holds_graph(v) is False]
            if free:
                candidate.fallback = _Candidate(
                    node, free, accumulator, self._detached(free), hook, candidate.evidence, loop,
                    all(self._known_tensor(v) for v in free), kept,
                )  # fmt: skip
        self._candidates.append(candidate)

    def _known_tensor(self, value: cst.BaseExpression) -> bool:
        """Is the output known to be a tensor, so that the fix's `.detach().cpu()` exists on it? A field
        of a model's output object only when it is one of the tensor fields (not `.latent_dist`)."""
        if isinstance(value, cst.Name):
            return value.value not in self._not_tensors.get(self.ctx.function_key, ())
        if isinstance(value, cst.Attribute):
            return value.attr.value in TENSOR_OUTPUT_FIELDS
        if isinstance(value, cst.Subscript):
            return self._known_tensor(value.value)
        return True

    def _concatenation(self, node: cst.Assign, target: cst.BaseExpression) -> None:
        """`feats = torch.cat([feats, f])` (or `f if feats is None else torch.cat([feats, f])`) over a
        pass over data: the running tensor holds every batch's outputs."""
        ctx = self.ctx
        if not any(_passes_over_data(loop, ctx) for loop in ctx.loops):
            return
        if isinstance(target, cst.Name):
            if accumulation.made_per_batch(ctx, target.value, innermost=True, over_batches_test=lambda loop: _over_batches(loop, ctx)):
                return  # started again in every batch (`feats = None` inside the loop): one batch's outputs
        elif accumulation.self_attribute(target) is None or not isinstance(target, cst.Attribute):
            return
        elif _rebound_in_loop(ctx, target, node):
            return  # `self.feats = None` again in the loop: one batch's outputs
        for branch in accumulation.branches(node.value):
            others = accumulation.concatenated_parts(branch, target, ctx)
            outputs = [e for e in others if self._on_device_output(e)]
            if outputs:
                self._add(node, outputs, ctx.module.code_for_node(target), None)
                return

    def _on_device_output(self, value: cst.BaseExpression) -> bool:
        """A model output that carries no autograd history (that is ML001's finding), or, in a
        function, one that may: whether it does is then the callers' grad mode, asked in `finish`
        (`_needs_no_grad_callers`)."""
        ctx = self.ctx
        if not model_output(value, ctx, self._known()):
            return False
        return ctx.holds_graph(value) is False or ctx.grad_mode is GradMode.DISABLED or (
            # only the default mode is the callers': `with torch.enable_grad():` keeps the history
            ctx.grad_mode is GradMode.ENABLED and ctx.function_key is not None and ctx.grad_inherited
        )

    def _needs_no_grad_callers(self, outputs: list) -> Optional[tuple]:
        """The function chain whose callers must all run it without gradients for the outputs to
        carry no history (a `test_emb(...)` that every caller calls under `torch.no_grad()`:
        `FileFacts.no_grad_functions`); None when the outputs carry none where they are."""
        ctx = self.ctx
        if ctx.grad_mode is GradMode.DISABLED or all(ctx.holds_graph(v) is False for v in outputs):
            return None
        return ctx.function_chain

    def _detached(self, outputs: list) -> bool:
        # Detached already where gradients are on; under no_grad, detach keeps the fix right if the
        # code is later run with gradients.
        ctx = self.ctx
        return all(ctx.holds_graph(v) is False for v in outputs) and ctx.grad_mode is GradMode.ENABLED

    def _evidence(self, hook: Optional[str]) -> Optional[str]:
        """Where the loop around the candidate sends its inputs (the model's device fact)."""
        loop = self.ctx.loop
        return None if hook is not None or loop is None else self.ctx.model.loop_device(loop)

    def finish(self, facts) -> None:
        # outputs that may carry history (ML001's) count only where every caller turns gradients off
        candidates = [
            c if c.no_grad_chain is None or any(key in facts.no_grad_functions for key in c.no_grad_chain) else c.fallback
            for c in self._candidates
        ]  # fmt: skip
        candidates = [c for c in candidates if c is not None]
        if not candidates:  # the device fact walks the whole file: only asked when it decides something
            return
        device = self.ctx.model.device
        for candidate in candidates:
            evidence = candidate.evidence
            if candidate.hook is not None:
                # Lightning's Trainer picks the accelerator itself (`accelerator="auto"` by default)
                on_device = not device.cpu_trainer
            elif evidence is None:
                # a loop that moves nothing and only calls models the file leaves on the CPU
                # (`Model.load_from_checkpoint(path)`, never moved) keeps host outputs
                on_device = device.accelerator and not (candidate.loop is not None and self.ctx.model.loop_on_host(candidate.loop))
            elif evidence == "accelerator":
                on_device = True
            else:
                # `.to(model.device)`: the inputs follow the model, which is where the file last put
                # it; nothing moves it (Lightning leaves a module on the CPU after `trainer.fit`).
                on_device = evidence in device.moved
            if not on_device:
                continue
            node = candidate.node
            replacements = tuple(
                (v, method_call(v, "cpu") if candidate.detached else method_call(method_call(v, "detach"), "cpu"))
                for v in candidate.outputs
            )
            fix = None
            if not candidate.typed:
                pass  # (`.latent_dist` is a distribution: no `.cpu()` on it)
            elif isinstance(node, (cst.Return, cst.AugAssign)) or (isinstance(node, cst.Call) and node.func.attr.value == "append"):  # type: ignore[attr-defined]
                # (not `torch.cat([feats, f])`: its first operand is still on the device)
                fix = NodeFix("Move it to the host before keeping it", Applicability.UNSAFE, replacements)
            where = (
                f"Lightning 1.x keeps what `{candidate.hook}` returns for every batch until `{candidate.accumulator}` "
                "runs at the end of the epoch, so every batch's model output stays on the device"
                if candidate.kept
                else f"Lightning runs `{candidate.hook}` once per batch of the evaluation, and `{candidate.accumulator}` "
                "keeps every batch's model output on the device until it is cleared"
                if candidate.hook is not None
                else f"`{candidate.accumulator}` keeps every batch's model output on the device"
            )
            self.report(
                node,
                f"{where}: device memory grows with the size of the dataset; keep `.detach().cpu()` "
                "(or a reduced metric)",
                fix,
            )


@dataclass
class _Candidate:
    node: cst.CSTNode  # the `.append(...)` / `.extend(...)` call, or the concatenating assignment
    outputs: list  # the model outputs in the kept value
    accumulator: str
    detached: bool
    hook: Optional[str]  # the Lightning evaluation hook the accumulation runs in, if any
    evidence: Optional[str]  # see _evidence
    loop: Optional[cst.CSTNode] = None  # the innermost loop around it (none in a Lightning hook)
    typed: bool = True  # every output is known to be a tensor: the fix's `.cpu()` exists on it
    kept: bool = False  # returned from a step hook whose returns the framework keeps
    no_grad_chain: Optional[tuple] = None  # functions one of which every caller must run under no_grad
    fallback: Optional["_Candidate"] = None  # its history-free outputs alone, where the callers keep gradients on


def _fresh_dict(value: cst.BaseExpression) -> bool:
    """`{}`, `{"x": x}`, `dict()`: a dict made here."""
    if isinstance(value, cst.Dict):
        return True
    return (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" and not value.args
    )  # fmt: skip


def _string_key(subscript: cst.Subscript) -> Optional[str]:
    """`"features"` of `batch["features"]`; None for any other index."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    key = subscript.slice[0].slice.value
    return key.evaluated_value if isinstance(key, cst.SimpleString) else None  # type: ignore[return-value]


def _evaluation_hook(ctx, accumulator: cst.BaseExpression) -> Optional[str]:
    """`validation_step` / `test_step` / `predict_step` appending to `self.<list>`: Lightning calls the
    hook once per batch (roles.per_batch_function), so the list grows over the whole evaluation."""
    if accumulation.self_attribute(accumulator) is None:
        return None
    hook = per_batch_function(ctx)
    if hook is None or hook.kind != "evaluation":
        return None
    return hook.name


def _rebound_in_loop(ctx, target: cst.Attribute, node: cst.Assign) -> bool:
    """Is `self.<attr>` bound anywhere else in the outermost loop over batches around `node`, or by a
    method of the class the loop calls (`self.reset()`)?  (Indexed once per loop and class.)"""
    loops = [loop for loop in ctx.loops if _over_batches(loop, ctx)]
    if not loops:
        return True
    attribute = target.attr.value
    counts, called = loop_bindings(loops[0])
    if counts.get(attribute, 0) > 1:  # (`node` itself is one of them)
        return True
    cls = enclosing_class(ctx)
    if cls is None:
        return True
    return any(method in called for method in class_bindings(cls).get(attribute, ()))


def _over_batches(loop, ctx) -> bool:
    """A loop over batches, `host_chunks`' loops included (where a list made per batch is made)."""
    return iterates_batches(loop) or moves_host_chunks(loop, ctx.function_node)


def _passes_over_data(loop, ctx) -> bool:
    """A loop over batches whose outputs may outgrow what is already on the device: not a stride
    loop that slices one tensor (`iteration.slices_counted_split`: it may be on the device whole),
    unless it moves each chunk to the device itself (`host_chunks`: the collection is on the host)."""
    return (iterates_batches(loop) and not slices_counted_split(loop)) or moves_host_chunks(loop, ctx.function_node)
