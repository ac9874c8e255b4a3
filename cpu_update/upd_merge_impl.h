/* upd_merge_impl.h — the updater's merge of one leaf with its runs of operations, for one key width:
 * included by upd_apply.c with UPD_T (the key type) and UPD_FN(name) defined (and upd_leaf_plan,
 * plan_failure declared). Not a header. */

/* Merges leaf `leaf` with runs [r_begin, r_end) (operations on one key each, in batch order).
 * With out_keys NULL only counts (the plan); otherwise writes the merged pairs to out_keys /
 * out_values. Stops a run at its first failing operation and records the smallest failing index. */
static void UPD_FN(merge_leaf)(const kr_tree *t, uint64_t leaf, const upd_ops *ops, uint64_t r_begin,
                               uint64_t r_end, const upd_params *p, UPD_T *out_keys, UPD_T *out_values,
                               upd_leaf_plan *plan)
{
    const UPD_T *old_keys = (const UPD_T *)t->keys + kr_leaf_key_offset(t, leaf);
    const UPD_T *old_values = (const UPD_T *)t->leaf_values + leaf * t->leaf_size;
    const uint64_t n_old = t->leaf_rank[leaf + 1] - t->leaf_rank[leaf];
    const UPD_T *sorted_keys = (const UPD_T *)ops->sorted_keys;
    const UPD_T *sorted_index = (const UPD_T *)ops->sorted_index;
    const UPD_T *values = (const UPD_T *)ops->sorted_values;
    const uint8_t *kinds = ops->sorted_kinds;
    memset(plan, 0, sizeof *plan);
    plan->first_error = UINT64_MAX;
    uint64_t i = 0, out = 0, r = r_begin;
    while (i < n_old || r < r_end) {
        if (r == r_end || (i < n_old && old_keys[i] < sorted_keys[ops->run_start[r]])) {
            if (out_keys) {
                out_keys[out] = old_keys[i];
                out_values[out] = old_values[i];
            }
            out++;
            i++;
            continue;
        }
        const UPD_T key = sorted_keys[ops->run_start[r]];
        bool present = i < n_old && old_keys[i] == key;
        UPD_T value = present && out_keys ? old_values[i] : 0; /* the plan needs no values */
        if (present)
            i++;
        for (uint64_t s = ops->run_start[r]; s < ops->run_start[r + 1]; s++) {
            const uint64_t op = sorted_index[s]; /* for the error message only */
            switch (kinds[s]) {
            case HARMONIA_OP_INSERT:
                if (present && p->insert_existing == HARMONIA_INSERT_EXISTING_ERROR) {
                    plan_failure(plan, op, HARMONIA_ERR_KEY_EXISTS);
                    s = ops->run_start[r + 1]; /* later operations on this key come after the failure */
                    continue;
                }
                if (present)
                    plan->updated++;
                else
                    plan->inserted++;
                present = true;
                value = values[s];
                break;
            case HARMONIA_OP_UPDATE:
                if (!present) {
                    if (p->update_missing == HARMONIA_UPDATE_MISSING_ERROR) {
                        plan_failure(plan, op, HARMONIA_ERR_KEY_MISSING);
                        s = ops->run_start[r + 1];
                        continue;
                    }
                    plan->missing++;
                    break;
                }
                plan->updated++;
                value = values[s];
                break;
            case HARMONIA_OP_UPSERT:
                if (present)
                    plan->updated++;
                else
                    plan->inserted++;
                present = true;
                value = values[s];
                break;
            default: /* delete */
                if (present)
                    plan->deleted++;
                else
                    plan->missing++;
                present = false;
                break;
            }
        }
        if (present) {
            if (out_keys) {
                out_keys[out] = key;
                out_values[out] = value;
            }
            out++;
        }
        r++;
    }
    plan->count = out;
}

/* Writes `count` merged pairs over `nodes` consecutive leaves starting at leaf slot `first_leaf` of
 * tree dst (keys spread as evenly as possible, padding = maximum key and zero values), and their
 * counts into dst->leaf_rank[leaf + 1] (a prefix sum turns them into ranks later, unless in place). */
static void UPD_FN(spread)(kr_tree *dst, uint64_t first_leaf, uint64_t nodes, const UPD_T *keys, const UPD_T *values,
                           uint64_t count, uint64_t *counts_out)
{
    const uint64_t L = dst->leaf_size;
    const UPD_T max_key = (UPD_T)kr_max_key(dst->key_bits);
    for (uint64_t k = 0; k < nodes; k++) {
        uint64_t begin = count / nodes * k + (k < count % nodes ? k : count % nodes);
        uint64_t end = count / nodes * (k + 1) + (k + 1 < count % nodes ? k + 1 : count % nodes);
        UPD_T *dk = (UPD_T *)dst->keys + kr_leaf_key_offset(dst, first_leaf + k);
        UPD_T *dv = (UPD_T *)dst->leaf_values + (first_leaf + k) * L;
        uint64_t n = end - begin;
        memcpy(dk, keys + begin, n * sizeof(UPD_T));
        memcpy(dv, values + begin, n * sizeof(UPD_T));
        for (uint64_t s = n; s < L; s++) {
            dk[s] = max_key;
            dv[s] = 0;
        }
        counts_out[k] = n;
    }
}
