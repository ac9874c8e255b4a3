"""_types.py — the records the API returns (tree information, update statistics, NTG profiles, the
GPU probe) as frozen dataclasses, and the update operation kinds. Field names and meanings are the
C structs' (include/harmonia.h)."""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional, Tuple


class Op(enum.IntEnum):
    """The kind of one update operation (harmonia_op_kind)."""

    INSERT = 0  #: add a key; a present key follows insert_existing
    UPDATE = 1  #: change a present key's value; a missing key follows update_missing
    UPSERT = 2  #: insert or update
    DELETE = 3  #: remove a key; a missing key is counted, not an error


@dataclasses.dataclass(frozen=True)
class TreeInfo:
    """harmonia_tree_info: the tree's shape, sizes and device copy."""

    key_bits: int
    fanout: int
    leaf_size: int
    height: int  #: levels; 1 = the root is a leaf
    key_count: int
    internal_nodes: int
    leaf_count: int
    level_nodes: Tuple[int, ...]  #: nodes per level, root first
    key_region_bytes: int
    leaf_value_bytes: int
    prefix_sum_bytes: int
    leaf_rank_bytes: int
    total_bytes: int
    leaf_fill: float
    min_key: Optional[int]  #: None for an empty tree
    max_key: Optional[int]
    version: int  #: bumped by each applied update batch
    ntg_group_size: int  #: the stored NTG choice; 0 = none
    mapped: bool  #: the tree reads a mapped index file
    constant_prefix_entries: int
    constant_prefix_levels: int
    device_resident: bool
    device_version: int
    device_bytes: int  #: GPU memory held by the device copy and its scratch
    device: int  #: the GPU of the device copy; without one the tree's setting (-1: the current device)


@dataclasses.dataclass(frozen=True)
class UpdateStats:
    """harmonia_update_stats: what one update batch did."""

    operations: int
    applied: int
    inserted: int
    updated: int
    deleted: int
    missing: int  #: deletes of absent keys and skipped updates of absent keys
    duplicates: int  #: operations on a key that an earlier operation of the batch named
    leaves_touched: int
    leaves_split: int
    auxiliary_nodes: int
    leaves_removed: int
    shape_changed: bool
    incremental_upload: bool
    uploaded_bytes: int
    sort_seconds: float
    apply_seconds: float
    relayout_seconds: float
    upload_seconds: float
    failed_operation: Optional[int]  #: index of the first failing operation of a failed batch


@dataclasses.dataclass(frozen=True)
class NtgModel:
    """harmonia_ntg_model_result: the paper's Eq. 4 from a CPU traversal of a sample."""

    group_sizes: Tuple[int, ...]
    steps: Tuple[float, ...]
    ratio: Tuple[float, ...]
    level_steps: Tuple[Tuple[float, ...], ...]
    choice: int
    first_level: int
    levels: int
    sample_queries: int
    runs: int
    psa: bool
    psa_begin_bit: int
    psa_end_bit: int
    window: int


@dataclasses.dataclass(frozen=True)
class NtgMeasurement:
    """harmonia_ntg_measurement: the GPU lookup timed for every group size."""

    group_sizes: Tuple[int, ...]
    seconds: Tuple[float, ...]
    queries_per_second: Tuple[float, ...]
    best: int
    queries: int
    found: int
    psa: bool
    warmup: int
    runs: int
    device: str


@dataclasses.dataclass(frozen=True)
class NtgProfile:
    """Tree.profile_ntg's answer: the model, the measurement (None when not measured) and the group
    size to keep (harmonia_ntg_choice: the measured best when measured, else the model's)."""

    model: NtgModel
    measurement: Optional[NtgMeasurement]
    choice: int
    kept: bool  #: the choice was stored with the tree (keep=True)


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """harmonia_device_info: the current CUDA device as the library sees it."""

    name: str
    sm_count: int
    compute_major: int
    compute_minor: int
    l2_bytes: int
    global_memory_bytes: int
    free_memory_bytes: int
    constant_memory_bytes: int
    device: int  #: the CUDA device id probed


def _tuples(d: dict) -> dict:
    return {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v) if isinstance(v, list) else v)
            for k, v in d.items()}


def tree_info(d: dict) -> TreeInfo:
    return TreeInfo(**d)


def update_stats(d: dict) -> UpdateStats:
    return UpdateStats(**d)


def ntg_model(d: dict) -> NtgModel:
    return NtgModel(**_tuples(d))


def ntg_measurement(d: Optional[dict]) -> Optional[NtgMeasurement]:
    return None if d is None else NtgMeasurement(**_tuples(d))
