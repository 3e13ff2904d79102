// expect: route<Near, Far>: Far cannot put/get
#include "../mock_transports.hpp"
#include <pgas/transport/route/route.hpp>
pgas::route<pgas::host, mock::bare> misuse;
