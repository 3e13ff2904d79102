// expect: route<Near, Far>: Near cannot put/get
#include "../mock_transports.hpp"
#include <pgas/transport/route/route.hpp>
pgas::route<mock::bare, pgas::host> misuse;
