// Method `rdc`: not implemented yet (see the project's issues). A class with no find_pairs slot
// makes bp_method_available() false and bp_context_create() return BP_ERR_UNSUPPORTED.
#include "method.h"

const bp_algorithm_class bp_rdc_class = {.name = "rdc"};
