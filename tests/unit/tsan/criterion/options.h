/* SPDX-License-Identifier: MIT */
/* The stand-in's criterion.h (beside this) declares what suites use of <criterion/options.h>. */
#include "criterion/criterion.h"
