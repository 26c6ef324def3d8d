/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_export.c — the keys of `gdrtrace export --json` (docs/reader.md):
 * one "metrics" array, each sample an object of its name (with the family's
 * suffix), its labels and its value, family by family as the text prints
 * them; no HELP or TYPE (a program knows the families).
 */
#include "tools/render/json_export.h"

#include <string.h>

#include "tools/render/json.h"

static void put(struct gt_json *js, const struct gt_prom_sample *m)
{
    const char *name = m->key, *p = name + strlen(name) + 1;
    gj_obj(js, NULL);
    gj_str(js, "name", name);
    gj_obj(js, "labels");
    for (int i = 0; i < m->nl; i++, p += strlen(p) + 1, p += strlen(p) + 1)
        gj_str(js, p, p + strlen(p) + 1);
    gj_end(js, '}');
    gj_dbl(js, "value", m->v);
    gj_end(js, '}');
}

void gt_json_export(FILE *f, const struct gt_prom *k)
{
    struct gt_json js;
    gj_init(&js, f);
    gj_obj(&js, NULL);
    gj_arr(&js, "metrics");
    for (size_t fam = 0; fam < k->nfam; fam++)
        for (size_t i = 0; i < k->ns; i++)
            if (k->s[i].fam == fam)
                put(&js, &k->s[i]);
    gj_end(&js, ']');
    gj_end(&js, '}');
    gj_done(&js);
}
