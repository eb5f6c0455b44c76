// liblo (Debian liblo-dev): OSC over UDP. Only its plain C functions are used from Swift; the
// variadic lo_send* macros and LO_TT_IMMEDIATE are not importable.
#include <lo/lo.h>
