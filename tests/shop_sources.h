// A small multi-source folder for the schema agent's tests: customers and
// orders as CSV (orders.customer_id → customers), and account notes and
// city pages as markdown (one titled in full, "Palo Alto, California", where
// the customers' table says "Palo Alto").
#ifndef FLOWRAG_TESTS_SHOP_SOURCES_H_
#define FLOWRAG_TESTS_SHOP_SOURCES_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "flowrag/engine.h"
#include "flowrag/schema.h"
#include "test_util.h"

namespace flowrag::testing {

inline void WriteShopSources(const std::string& d) {
  WriteFile(d + "/customers.csv",
            "customer_id,name,city,segment\n"
            "C001,Acme Corp,Berlin,enterprise\n"
            "C002,Globex,Paris,smb\n"
            "C003,Initech,Austin,smb\n"
            "C004,Umbrella,Raccoon City,enterprise\n"
            "C005,Hooli,Palo Alto,enterprise\n"
            "C006,Vandelay Industries,New York,smb\n");
  WriteFile(d + "/orders.csv",
            "order_id,customer_id,amount,order_date\n"
            "1001,C001,250.00,2021-01-03\n"
            "1002,C002,75.50,2021-01-09\n"
            "1003,C001,1200.00,2022-02-14\n"
            "1004,C003,250.00,2022-02-20\n"
            "1005,C005,75.50,2023-03-01\n"
            "1006,C004,1200.00,2023-03-15\n");
  WriteFile(d + "/notes/acme.md",
            "# Acme Corp account review\n\nAcme Corp renewed its contract in February "
            "2022. The account manager noted that Acme Corp plans to expand into Munich.\n");
  WriteFile(d + "/notes/globex.md",
            "# Globex support ticket\n\nGlobex reported that the delivery arrived "
            "damaged. A replacement was shipped within two days.\n");
  WriteFile(d + "/notes/berlin.md",
            "# Berlin\n\nBerlin is the capital of Germany. About 3.7 million "
            "inhabitants live in Berlin.\n");
  WriteFile(d + "/notes/palo_alto.md",
            "# Palo Alto, California\n\nPalo Alto lies in Santa Clara County. Many technology "
            "companies were founded in its garages.\n");
}

// The shop sources written to `dir`/src, their schema induced offline and
// ingested into the store `dir`/store.db. Null (and a test failure) on error.
inline std::unique_ptr<Engine> OpenShopStore(const std::string& dir, const RoutingPolicy& routing = {}) {
  const std::string src = dir + "/src";
  WriteShopSources(src);
  auto induced = InduceSchema(src);
  if (!induced.ok()) {
    ADD_FAILURE() << induced.status().ToString();
    return nullptr;
  }
  auto engine = Engine::Open(dir + "/store.db");
  if (!engine.ok()) {
    ADD_FAILURE() << engine.status().ToString();
    return nullptr;
  }
  SchemaContract contract = DeriveContract(*induced);
  contract.routing = routing;
  auto report = (*engine)->Ingest(src, contract);
  if (!report.ok()) {
    ADD_FAILURE() << report.status().ToString();
    return nullptr;
  }
  return std::move(engine).value();
}

}  // namespace flowrag::testing

#endif  // FLOWRAG_TESTS_SHOP_SOURCES_H_
