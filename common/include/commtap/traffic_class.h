/* SPDX-License-Identifier: MIT */
/* The traffic classes commtap tells apart, shared by the model and the classifier. */
#ifndef COMMTAP_TRAFFIC_CLASS_H
#define COMMTAP_TRAFFIC_CLASS_H

#include <string.h>

enum ct_class {
	CT_CLASS_TP = 0, /* tensor parallel */
	CT_CLASS_PP,	 /* pipeline parallel */
	CT_CLASS_DP,	 /* data parallel */
	CT_CLASS_EP,	 /* expert parallel (MoE all-to-all) */
	CT_CLASS_EMB,	 /* EmbTableSyn: first and last stage's embedding sync */
	CT_CLASS_COUNT,
	CT_CLASS_OTHER = CT_CLASS_COUNT,
};

static inline const char *ct_class_name(enum ct_class c)
{
	static const char *const names[] = {"TP", "PP", "DP", "EP", "EmbTableSyn", "Other"};

	return (unsigned)c <= CT_CLASS_OTHER ? names[c] : "Other";
}

/* The class named (as ct_class_name writes it), or -1. */
static inline int ct_class_from_name(const char *name)
{
	for (int c = 0; c <= CT_CLASS_OTHER; c++)
		if (!strcmp(name, ct_class_name((enum ct_class)c)))
			return c;
	return -1;
}

#endif
