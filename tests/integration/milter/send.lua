-- Drives mimeuri --milter with miltertest (no MTA). Parameters (-D name=value):
--   sock   the service's socket
--   msg    a message file (CRLF line ends), sent as an MTA sends it: header fields, body chunks
--   count  how many times to send it on the one connection (default 1)
--   expect what to check after each message:
--     "body:FILE"      the body was replaced by FILE's bytes, and the reply is accept
--     "bodychanged"    the body was replaced (the last chunk only is visible to miltertest)
--     "none"           no change of any kind was requested, and the reply is accept
--     "headers"        the forged Mimeuri-Refs field got the true value, Content-Type-URI
--                      was added, the body's reference repaired
--     "summary"        Mimeuri-Refs added, nothing else
--     "label"          Content-Type-URI added, nothing else
--     "tempfail"       the reply is 451 4.3.0, no change requested
-- Errors are printed (miltertest itself only exits 1) and exit 1.
local function readfile(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function send(conn, text, leadspc)
  local hdr_end = assert(text:find("\r\n\r\n", 1, true), "no empty line in " .. msg)
  local head, body = text:sub(1, hdr_end + 1), text:sub(hdr_end + 4)
  local fields = {}
  for line in head:gmatch("(.-)\r\n") do
    if line:match("^[ \t]") and #fields > 0 then
      fields[#fields].value = fields[#fields].value .. "\r\n" .. line
    else
      local n, v = line:match("^([^:]*):(.*)$")
      table.insert(fields, { name = n, value = v })
    end
  end
  for _, f in ipairs(fields) do
    local v = f.value
    -- miltertest puts the space after the colon back itself when SMFIP_HDR_LEADSPC is on
    v = v:gsub("^ ", "")
    if mt.header(conn, f.name, v) ~= nil then error("mt.header failed") end
  end
  if not mt.test_option(conn, SMFIP_NOEOH) then mt.eoh(conn) end
  for i = 1, #body, 65535 do -- libmilter takes chunks of at most 65,535 bytes
    if mt.bodystring(conn, body:sub(i, i + 65534)) ~= nil then error("mt.bodystring failed") end
  end
  if mt.eom(conn) ~= nil then error("mt.eom failed") end
end

local function check(cond, what)
  if not cond then error("check failed: " .. what) end
end

local ok, err = pcall(function()
  mt.set_timeout(120) -- the 100 MB message
  local conn = mt.connect(sock, 40, 0.05)
  if conn == nil then error("cannot connect to " .. sock) end
  if not mt.test_option(conn, SMFIP_NOCONNECT) then mt.conninfo(conn, "localhost", "127.0.0.1") end
  local leadspc = mt.test_option(conn, SMFIP_HDR_LEADSPC)
  local text = readfile(msg)
  local n = tonumber(count or "1")
  for k = 1, n do
    mt.macro(conn, SMFIC_MAIL, "i", "QUEUE" .. k)
    if not mt.test_option(conn, SMFIP_NOMAIL) then mt.mailfrom(conn, "alice@example.test") end
    if not mt.test_option(conn, SMFIP_NORCPT) then mt.rcptto(conn, "bob@example.test") end
    send(conn, text, leadspc)
    local reply = mt.getreply(conn)
    if expect:sub(1, 5) == "body:" then
      check(reply == SMFIR_ACCEPT, "reply accept")
      check(mt.eom_check(conn, MT_BODYCHANGE, readfile(expect:sub(6))), "body replaced by the expected bytes")
      check(not mt.eom_check(conn, MT_HDRADD) and not mt.eom_check(conn, MT_HDRCHANGE) and
            not mt.eom_check(conn, MT_HDRDELETE), "no header changed")
    elseif expect == "bodychanged" then
      check(reply == SMFIR_ACCEPT, "reply accept")
      check(mt.eom_check(conn, MT_BODYCHANGE), "body replaced")
    elseif expect == "none" then
      check(reply == SMFIR_ACCEPT, "reply accept (" .. tostring(reply) .. ")")
      check(not mt.eom_check(conn, MT_BODYCHANGE), "body not replaced")
      check(not mt.eom_check(conn, MT_HDRADD) and not mt.eom_check(conn, MT_HDRINSERT) and
            not mt.eom_check(conn, MT_HDRCHANGE) and not mt.eom_check(conn, MT_HDRDELETE), "no header changed")
    elseif expect == "headers" then
      check(reply == SMFIR_ACCEPT, "reply accept")
      -- The forged field's value is replaced where it stands: one change, no second field.
      local sp = leadspc and " " or ""
      check(mt.eom_check(conn, MT_HDRCHANGE, "Mimeuri-Refs", sp .. "resolved=1 dangling=0 ambiguous=0"),
            "the forged Mimeuri-Refs field given the true value")
      check(not mt.eom_check(conn, MT_HDRADD, "Mimeuri-Refs"), "no second Mimeuri-Refs")
      check(mt.eom_check(conn, MT_HDRADD, "Content-Type-URI"), "Content-Type-URI added")
      check(mt.eom_check(conn, MT_BODYCHANGE), "the body's references repaired")
    elseif expect == "summary" or expect == "label" then
      local name = expect == "summary" and "Mimeuri-Refs" or "Content-Type-URI"
      check(reply == SMFIR_ACCEPT, "reply accept")
      check(mt.eom_check(conn, MT_HDRADD, name), name .. " added")
      check(not mt.eom_check(conn, MT_BODYCHANGE), "body not replaced")
      check(not mt.eom_check(conn, MT_HDRDELETE) and not mt.eom_check(conn, MT_HDRCHANGE), "no other header change")
    elseif expect == "tempfail" then
      check(reply == SMFIR_REPLYCODE, "reply 451 (" .. tostring(reply) .. ")")
      check(mt.eom_check(conn, MT_SMTPREPLY, "451", "4.3.0", mtext), "451 4.3.0 " .. mtext)
      check(not mt.eom_check(conn, MT_BODYCHANGE), "body not replaced")
    else
      error("unknown expect " .. expect)
    end
  end
  mt.disconnect(conn)
end)
if not ok then
  mt.echo("ERROR: " .. tostring(err))
  os.exit(1)
end
