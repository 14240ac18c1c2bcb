// FloatMatrix is public (include/flowrag/matrix.h); this header stays for
// the modules that include it by its old name.
#ifndef FLOWRAG_COMMON_MATRIX_H_
#define FLOWRAG_COMMON_MATRIX_H_

#include "flowrag/matrix.h"

#endif  // FLOWRAG_COMMON_MATRIX_H_
