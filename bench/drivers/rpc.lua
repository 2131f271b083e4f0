-- wrk script: POST /rpc get_config [1, "addr"]
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","method":"get_config","params":[1,"addr"],"id":1}'
wrk.headers["Content-Type"] = "application/json"
